// etcd's JSON gateway carries keys and values as standard base64 (libsodium's codec).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aml::etcd {

std::string to_base64(std::string_view bytes);
std::optional<std::string> from_base64(std::string_view text);  // nullopt: not base64

}  // namespace aml::etcd
