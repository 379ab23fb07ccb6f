// Bytes as hex text and back: keys in the environment, percent-escapes in etcd's answers.
#pragma once

#include <string>
#include <string_view>

namespace aml {

std::string to_hex(std::string_view bytes);
// The bytes of a hex string; empty where it is not one.
std::string from_hex(std::string_view hex);

}  // namespace aml
