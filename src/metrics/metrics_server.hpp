// --metrics-port: Prometheus's scrapes of /metrics (DESIGN §6b), answered by one thread of its
// own beside the supervisor (the supervisor's loop runs only while workers run, and a scrape
// must be answered during a rendezvous too): whatever the clients do, the supervisor never
// waits for them. At most kMaxConnections at once, each given kRequestBytes and kExchangeTime
// for its whole exchange, one request a connection; where all are taken, the oldest still
// silent one makes room for the newcomer (a flood of idle connections cannot keep a scrape out).
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "util/service_thread.hpp"
#include "util/unique_fd.hpp"

namespace aml {

class MetricsServer {
 public:
  static constexpr int kMaxConnections = 16;
  static constexpr std::size_t kRequestBytes = 8192;
  static constexpr std::chrono::seconds kExchangeTime{10};

  // Listens on `address`:`port` (0: the kernel picks); `render` makes the page at each scrape
  // (on the server's thread). The connections wait in the listening socket's queue until
  // serve() starts the thread: a thread costs a launch of one node more than the rest of the
  // metrics (0.6 ms of CPU here), so a job that meets nobody starts it at its first scrape.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address, int port,
                                                      std::function<std::string()> render);
  ~MetricsServer();

  // Starts answering (the thread); again: nothing. From the thread that made the server.
  void serve();
  bool serving() const { return thread_.has_value(); }
  int listen_fd() const { return listener_.get(); }
  int port() const { return port_; }
  // "http://10.0.0.4:9400/metrics"
  std::string url() const;

 private:
  MetricsServer(UniqueFd listener, std::string address, int port,
                std::function<std::string()> render);
  void answer_scrapes();  // the thread's loop

  UniqueFd listener_;
  UniqueFd wake_;  // an eventfd: the destructor's word to stop
  std::string address_;
  int port_;
  std::function<std::string()> render_;
  std::optional<ServiceThread> thread_;  // last: it stops before the rest goes
};

// The answer to one request's bytes (its head, up to the blank line): status line, headers and
// body, ready to send. `render` is called only for GET /metrics.
std::string metrics_response(const std::string& request,
                             const std::function<std::string()>& render);

}  // namespace aml
