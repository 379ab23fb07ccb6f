// A store served from a thread of its own: node 0's launcher hosts the job's store so (DESIGN
// §5), and rank 0 of a communicator when no launcher store is there. The server itself is
// single-threaded and event driven; its own thread lets its host use it through an ordinary
// client, blocking calls included, like everybody else.
#pragma once

#include <aml/error.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "store/core/store_server.hpp"
#include "store/relay/worker_store_relay.hpp"
#include "util/service_thread.hpp"

namespace aml {

// Raises this process's descriptor soft limit to its hard limit, as far as the kernel lets it:
// a store takes a descriptor a connection, and node 0's serves every rank of the job (a
// thousand nodes, or a flood of strangers beside them, need more than the usual 1,024). The
// limit now. The workers get the limit the launcher started with (supervisor/spawn.cpp).
std::uint64_t raise_descriptor_limit();
// Whether a store process with descriptor limit `limit` can hold a connection for each of
// `ranks` workers and `nodes` launchers, with room for the launcher's own files.
inline bool holds_every_rank(std::uint64_t limit, std::uint64_t ranks, std::uint64_t nodes) {
  constexpr std::uint64_t kSpare = 256;
  return ranks + nodes + kSpare <= limit;
}

class StoreHost {
 public:
  // Listens on bind_address:port ("0.0.0.0": every interface) for the job's clients: those
  // that present `token` and prove themselves as `auth` asks. `role` says in an error why that
  // port must be free; refusals go to stderr after `speaker` ("aml-launch").
  // Serving (its thread) begins at once, or with `Serving::at_serve` at serve(): a launch that
  // starts its workers first pays only the listening socket on the way to their spawn, and
  // whoever connects meanwhile waits in that socket's backlog.
  enum class Serving { now, at_serve };
  static Result<std::unique_ptr<StoreHost>> start(const std::string& bind_address, int port,
                                                  const std::string& token,
                                                  const store::ServerAuth& auth,
                                                  const std::string& role,
                                                  const std::string& speaker,
                                                  Serving serving = Serving::now);
  // The workers' store (DESIGN §3): torch's protocol on bind_address:port (0: a free one),
  // for connections from the `admitted` hosts alone.
  static Result<std::unique_ptr<StoreHost>> start_workers_store(
      const std::string& bind_address, int port,
      std::shared_ptr<const store::AdmittedHosts> admitted, const std::string& role,
      const std::string& speaker, Serving serving = Serving::now);
  // The workers' store behind a socket that another StoreHost listens on (the launchers',
  // whose options name `doorway`): torch's connections to it come through the doorway, from
  // the `admitted` hosts alone. The doorway stays open until this host goes.
  static Result<std::unique_ptr<StoreHost>> start_behind(
      std::shared_ptr<store::TorchDoorway> doorway, int port,
      std::shared_ptr<const store::AdmittedHosts> admitted, const std::string& speaker);
  // Either door, as `options` has it.
  static Result<std::unique_ptr<StoreHost>> start_with(const std::string& bind_address, int port,
                                                       store::ServerOptions options,
                                                       const std::string& role,
                                                       const std::string& speaker,
                                                       Serving serving = Serving::now);
  ~StoreHost();  // stops serving and joins the thread

  int port() const { return server_->port(); }
  void serve();  // begins serving, where it has not yet (Serving::at_serve)
  // Readable once a client connects (the server's own epoll set, its listening socket in it):
  // for whoever calls serve() at the first use.
  int first_use_fd() const { return server_->epoll_fd(); }

 private:
  explicit StoreHost(std::unique_ptr<store::StoreServer> server,
                     std::shared_ptr<store::TorchDoorway> doorway = nullptr,
                     Serving serving = Serving::now);

  std::unique_ptr<store::StoreServer> server_;
  std::shared_ptr<store::TorchDoorway> doorway_;  // closed first: nothing more is handed
  std::optional<ServiceThread> thread_;           // last: it stops before the server goes
};

// A node's relay to the workers' store at node 0 (store/relay/worker_store_relay.hpp), served from
// a thread of its own: every node's launcher but node 0's runs one for its workers.
class RelayHost {
 public:
  // Carries the workers' store calls from listen_address:port (0: a free one) to
  // store_host:store_port.
  static Result<std::unique_ptr<RelayHost>> start(const std::string& store_host, int store_port,
                                                  const std::string& listen_address, int port);
  int port() const { return relay_->port(); }

 private:
  explicit RelayHost(std::unique_ptr<store::WorkerStoreRelay> relay);

  std::unique_ptr<store::WorkerStoreRelay> relay_;
  ServiceThread thread_;  // last: it stops before the relay goes
};

}  // namespace aml
