#include "topology/rdzv_backend.hpp"

#include "topology/host_port.hpp"

namespace aml {

Result<bool> is_etcd_backend(std::string_view variable, std::string_view name) {
  if (name.empty() || name == "c10d" || name == "static") return false;
  if (name == "etcd" || name == "etcd-v3") return true;
  if (name == "etcd-v2") {
    return invalid(std::string(variable), std::string(name),
                   "etcd or etcd-v3 (aml-launch speaks etcd's v3 API; the v2 API was removed in "
                   "etcd 3.6), or c10d");
  }
  return invalid(std::string(variable), std::string(name),
                 "c10d or static (node 0's store), or etcd / etcd-v3 (an etcd cluster)");
}

Result<std::vector<std::string>> etcd_endpoints(std::string_view variable, std::string_view list) {
  std::vector<std::string> endpoints;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string_view one = list.substr(start, comma - start);
    // torchrun's etcd backend also takes http:// or https:// before each.
    if (one.starts_with("http://")) one.remove_prefix(7);
    if (one.starts_with("https://")) one.remove_prefix(8);
    auto split = split_host_port(variable, one);
    if (!split || split->host.empty()) {
      return invalid(std::string(variable), std::string(list),
                     "etcd members as HOST[:PORT],HOST[:PORT],... (each may start with http:// "
                     "or https://)");
    }
    const bool v6 = split->host.find(':') != std::string::npos;
    endpoints.push_back((v6 ? "[" + split->host + "]" : split->host) + ":" +
                        std::to_string(split->port.value_or(kEtcdDefaultPort)));
    start = comma + 1;
  }
  return endpoints;
}

}  // namespace aml

namespace aml {

Result<bool> etcd_endpoints_use_tls(std::string_view variable, std::string_view list) {
  const bool https = list.find("https://") != std::string_view::npos;
  if (https && list.find("http://") != std::string_view::npos) {
    return invalid(
        std::string(variable), std::string(list),
        "every member with https:// or none: a job speaks TLS to all of etcd or to none");
  }
  return https;
}

}  // namespace aml
