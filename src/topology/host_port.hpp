// "host:port", "[v6addr]:port", "host", "[v6addr]" and bare IPv6 addresses.
#pragma once

#include <aml/error.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace aml {

struct HostPort {
  std::string host;  // brackets removed from IPv6 literals
  std::optional<int> port;
};

// Splits on the last ':' (an unbracketed address with several ':' is IPv6 without a port).
// `variable` names the source of the text in errors.
Result<HostPort> split_host_port(std::string_view variable, std::string_view text);

}  // namespace aml
