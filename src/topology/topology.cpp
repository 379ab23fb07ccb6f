#include <aml/topology.hpp>

namespace aml {

std::string_view to_string(Launch launch) {
  return launch == Launch::per_process ? "per-process" : "per-node";
}

}  // namespace aml
