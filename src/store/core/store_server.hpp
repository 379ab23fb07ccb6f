// The rendezvous store server (DESIGN §5): the core (store_core.hpp: sockets, keys, blocked
// waits) behind one door (store_door.hpp): the launchers' own protocol with its handshake
// (launchers/launchers_door.hpp), or torch's TCPStore protocol for the workers
// (torch/torch_door.hpp, DESIGN §3), from each worker itself or carried by its node's relay.
#pragma once

#include <aml/error.hpp>
#include <functional>
#include <memory>
#include <string>

#include "store/core/server_options.hpp"
#include "util/unique_fd.hpp"

namespace aml::store {

class StoreCore;
class StoreDoor;

class StoreServer {
 public:
  // Listens on bind_address:port (port 0: the kernel picks one; see port()), with the door
  // options.door names.
  static Result<std::unique_ptr<StoreServer>> listen(const std::string& bind_address, int port,
                                                     ServerOptions options);
  // The same, with a door of the caller's over the core (store_door.hpp).
  using DoorMaker = std::function<std::unique_ptr<StoreDoor>(StoreCore&)>;
  static Result<std::unique_ptr<StoreServer>> listen(const std::string& bind_address, int port,
                                                     ServerOptions options, const DoorMaker& door);
  // torch's door behind another server's socket (torch_doorway.hpp): it listens on nothing
  // and serves the connections handed to it; `port` is that socket's, for reports.
  static Result<std::unique_ptr<StoreServer>> behind_doorway(int port, ServerOptions options);
  ~StoreServer();

  // A connection accepted and read by another server's thread, served here from now on;
  // safe to call from any thread.
  void adopt(UniqueFd fd, std::string peer, std::string first_bytes);

  int port() const;
  // Readable when the server has work: a host's own event loop can watch it.
  int epoll_fd() const;
  // Handles what is ready, waiting at most timeout_ms (-1: until something happens).
  void poll_once(int timeout_ms);
  // Serves until stop() is called; for a thread of its own.
  void run();
  // Makes run() return soon; safe to call from any thread.
  void stop();

  std::size_t connection_count() const;
  std::size_t key_count() const;
  // Entries of blocked gets and waits (registry and deadline queue), for tests.
  std::size_t pending_wait_entries() const;
  // Bytes the server holds per connection right now (buffers and bookkeeping), for reports.
  std::size_t connection_memory() const;
  std::size_t unproven_count() const;
  std::size_t refusals() const;

 private:
  explicit StoreServer(std::unique_ptr<StoreCore> core);
  std::unique_ptr<StoreCore> core_;
};

}  // namespace aml::store
