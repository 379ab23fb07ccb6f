#include "topology/master.hpp"

#include "topology/host_port.hpp"
#include "topology/numbers.hpp"

namespace aml {

Result<std::optional<std::string>> read_host(const Env& env, std::string_view variable,
                                             bool port_allowed) {
  const std::string* text = find(env, variable);
  if (text == nullptr) return std::optional<std::string>();
  auto parsed = split_host_port(variable, *text);
  if (!parsed) return parsed.error();
  if (parsed->port && !port_allowed) {
    return invalid(std::string(variable), *text,
                   "a host name or address without a port (the port goes elsewhere)");
  }
  return std::optional<std::string>(parsed->host);
}

Result<std::optional<std::string>> first_host(const Env& env,
                                              std::initializer_list<std::string_view> variables) {
  for (std::string_view variable : variables) {
    auto host = read_host(env, variable);
    if (!host || *host) return host;
  }
  return std::optional<std::string>();
}

Result<int> read_port_or(const Env& env, std::string_view variable, int fallback) {
  auto port = optional_port(env, variable);
  if (!port) return port.error();
  return port->value_or(fallback);
}

std::optional<Error> read_master_env(const Env& env, Topology& t, int fallback_port) {
  auto addr = read_host(env, "MASTER_ADDR");
  if (!addr) return addr.error();
  auto port = read_port_or(env, "MASTER_PORT", fallback_port);
  if (!port) return port.error();
  t.master_addr = addr->value_or("");
  t.master_port = *port;
  return std::nullopt;
}

}  // namespace aml
