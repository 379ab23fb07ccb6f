#include "topology/host_port.hpp"

#include <algorithm>

#include "topology/numbers.hpp"

namespace aml {
namespace {

bool valid_host_chars(std::string_view host) {
  return !host.empty() && std::none_of(host.begin(), host.end(), [](char c) {
    return c <= ' ' || c == '/' || c == '[' || c == ']' || c == '@' || c == 0x7f;
  });
}

}  // namespace

Result<HostPort> split_host_port(std::string_view variable, std::string_view text) {
  const std::string expected = "host, host:port or [IPv6]:port";
  auto bad = [&] { return invalid(std::string(variable), std::string(text), expected); };
  HostPort out;
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) return bad();
    out.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad();
      port_text = rest.substr(1);
      has_port = true;
    }
    if (out.host.find(':') == std::string::npos) return bad();  // brackets only for IPv6
  } else {
    std::size_t colons = std::count(text.begin(), text.end(), ':');
    if (colons == 1) {
      std::size_t colon = text.rfind(':');
      out.host = std::string(text.substr(0, colon));
      port_text = text.substr(colon + 1);
      has_port = true;
    } else {
      out.host = std::string(text);  // a name, an IPv4 address, or IPv6 without a port
    }
  }
  bool host_ok =
      out.host.find(':') != std::string::npos
          ? out.host.find_first_not_of("0123456789abcdefABCDEF:.%") == std::string::npos ||
                out.host.find('%') != std::string::npos
          : valid_host_chars(out.host);
  if (!host_ok || out.host.empty()) return bad();
  if (has_port) {
    auto port = parse_port(variable, port_text);
    if (!port)
      return invalid(std::string(variable), std::string(text),
                     expected + " with a port from 1 to 65535");
    out.port = *port;
  }
  return out;
}

}  // namespace aml
