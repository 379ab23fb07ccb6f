#include "metrics_setup.hpp"

#include <unistd.h>

#include "net/route_interface.hpp"
#include "topology/numbers.hpp"
#include "util/write_all.hpp"

namespace aml {

Result<MetricsPlace> metrics_place(const std::string& flag_value, const Topology& topology) {
  MetricsPlace place;
  std::string port_text = flag_value;
  const auto colon = flag_value.rfind(':');
  if (colon != std::string::npos) {
    place.address = flag_value.substr(0, colon);
    port_text = flag_value.substr(colon + 1);
    if (place.address.size() >= 2 && place.address.front() == '[' && place.address.back() == ']')
      place.address = place.address.substr(1, place.address.size() - 2);
    if (place.address.empty()) {
      return invalid("--metrics-port", flag_value, "PORT, or ADDR:PORT with an address");
    }
  }
  auto port = parse_number("--metrics-port", port_text, 0, 65535);
  if (!port) {
    return invalid("--metrics-port", flag_value,
                   "a port from 0 to 65535 (0: a free one, said), or ADDR:PORT");
  }
  place.port = *port;
  if (place.port != 0 && topology.launch == Launch::per_process) {
    place.port += topology.local_rank;  // the launchers of one node each have their own
    if (place.port > 65535) {
      return invalid("--metrics-port", flag_value,
                     "a port that leaves room for this node's per-process launchers (PORT + "
                     "local rank " +
                         std::to_string(topology.local_rank) + " passes 65535)");
    }
  }
  if (place.address.empty()) {
    const bool several_nodes = topology.nnodes > 1 || topology.elastic.has_value();
    if (several_nodes && !topology.master_addr.empty()) {
      place.address = route_interface_to(topology.master_addr).address;
    }
    if (place.address.empty()) place.address = "127.0.0.1";
  }
  return place;
}

Result<std::unique_ptr<MetricsServer>> start_metrics(const Options& options,
                                                     const Topology& topology,
                                                     MetricsBoard& board) {
  if (options.metrics_port.empty()) return std::unique_ptr<MetricsServer>();
  auto place = metrics_place(options.metrics_port, topology);
  if (!place) return place.error();
  auto server =
      MetricsServer::start(place->address, place->port, [&board] { return board.render(); });
  if (!server) return server.error();
  if (topology.nnodes > 1 || topology.elastic) (*server)->serve();
  (void)write_all(STDERR_FILENO, "aml-launch: metrics at " + (*server)->url() + "\n");
  return std::move(*server);
}

}  // namespace aml
