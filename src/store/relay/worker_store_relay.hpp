// A node's relay to the workers' store (DESIGN §3, relay_wire.hpp): it listens on this host's
// loopback for its own workers' torch store connections and carries each one's bytes, as a
// stream of its own, over one connection to the job's store at node 0. It reads nothing of
// torch's protocol; node 0 serves each stream as it would the worker's own connection.
// Single-threaded and event driven, like the store server: one worker that does not read its
// replies is dropped alone, and one that sends faster than node 0 takes waits its turn.
#pragma once

#include <aml/error.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/unique_fd.hpp"

namespace aml::store {

struct RelayOptions {
  std::chrono::milliseconds connect_timeout{30000};  // node 0's store may still be starting
  std::size_t max_pending_output = 16u << 20;        // a worker that does not read: dropped
  std::size_t trunk_backlog = 8u << 20;  // workers wait (are not read) while this much is unsent
};

class WorkerStoreRelay {
 public:
  // Connects to the workers' store at store_host:store_port and listens on
  // listen_address:port (0: a free port; see port()).
  static Result<std::unique_ptr<WorkerStoreRelay>> open(const std::string& store_host,
                                                        int store_port,
                                                        const std::string& listen_address, int port,
                                                        RelayOptions options = {});
  ~WorkerStoreRelay();

  int port() const { return port_; }
  int epoll_fd() const { return epoll_.get(); }
  void poll_once(int timeout_ms);
  void run();   // until stop()
  void stop();  // from any thread

 private:
  struct Local {
    UniqueFd fd;
    std::string out;
    std::size_t out_offset = 0;
    bool want_write = false;
    bool paused = false;            // not read while the trunk's backlog is full
    bool close_after_send = false;  // node 0 closed it: what it was sent goes first
  };

  WorkerStoreRelay(UniqueFd listener, UniqueFd epoll, UniqueFd wakeup, UniqueFd trunk, int port,
                   RelayOptions options);
  void accept_all();
  void on_local_readable(std::uint32_t stream);
  void on_local_writable(std::uint32_t stream);
  void drop_local(std::uint32_t stream, bool tell_node0);
  void on_trunk_readable();
  void flush_trunk();
  void lose_trunk();
  void watch(int fd, std::uint64_t key, std::uint32_t events, bool added);

  UniqueFd listener_;
  UniqueFd epoll_;
  UniqueFd wakeup_;
  UniqueFd trunk_;
  int port_;
  RelayOptions options_;
  std::atomic<bool> stopping_{false};
  bool trunk_lost_ = false;
  bool trunk_want_write_ = false;
  std::string trunk_in_;
  std::string trunk_out_;
  std::size_t trunk_out_offset_ = 0;
  std::unordered_map<std::uint32_t, Local> locals_;
  std::vector<std::uint32_t> paused_;
  std::uint32_t next_stream_ = 1;
};

}  // namespace aml::store
