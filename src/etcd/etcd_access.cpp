#include "etcd/etcd_access.hpp"

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace aml::etcd {
namespace {

constexpr std::string_view kKnownKeys =
    "protocol=http|https, cacert (ca_cert), cert (ssl_cert), key (ssl_cert_key), user "
    "(username), password_file, transport=grpc|gateway|auto";

Result<std::string> read_file(std::string_view variable, const std::string& key,
                              const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return invalid(std::string(variable), key + "=" + path, "a file this launcher can read");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string Access::describe() const {
  std::string text = tls ? "TLS (CA " + (ca_file.empty() ? std::string("the system's") : ca_file) +
                               (cert_file.empty() ? "" : ", client certificate " + cert_file) + ")"
                         : "plain HTTP";
  if (!user.empty()) text += ", etcd user " + user;
  return text;
}

Result<Access> parse_access(std::string_view variable, std::string_view conf, bool https_endpoints,
                            const Env& env) {
  Access access;
  std::string protocol, password_file;
  std::size_t start = 0;
  while (start < conf.size()) {
    const std::size_t comma = std::min(conf.find(',', start), conf.size());
    const std::string_view pair = conf.substr(start, comma - start);
    start = comma + 1;
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      return invalid(std::string(variable), std::string(pair),
                     "key=value (" + std::string(kKnownKeys) + ")");
    }
    const std::string key(pair.substr(0, equals));
    std::string value(pair.substr(equals + 1));
    if (key == "protocol") {
      protocol = value;
    } else if (key == "cacert" || key == "ca_cert") {
      access.ca_file = value;
    } else if (key == "cert" || key == "ssl_cert") {
      access.cert_file = value;
    } else if (key == "key" || key == "ssl_cert_key") {
      access.key_file = value;
    } else if (key == "user" || key == "username") {
      access.user = value;
    } else if (key == "transport") {
      if (value == "grpc") {
        access.transport = Transport::grpc;
      } else if (value == "gateway") {
        access.transport = Transport::gateway;
      } else if (value != "auto") {
        return invalid(std::string(variable), "transport=" + value,
                       "transport=grpc (etcd's gRPC API), gateway (its JSON gateway) or auto");
      }
    } else if (key == "password_file") {
      password_file = value;
    } else if (key == "password") {
      // Said without the value: it is a password.
      return invalid(std::string(variable), "password=...",
                     "password_file=FILE or the variable " + std::string(kPasswordVariable) +
                         " (a password on the command line is readable by every user of the "
                         "node)");
    } else {
      return invalid(std::string(variable), key, "one of " + std::string(kKnownKeys));
    }
  }
  if (!protocol.empty() && protocol != "http" && protocol != "https") {
    return invalid(std::string(variable), "protocol=" + protocol, "protocol=http or https");
  }
  const bool tls_files = !access.ca_file.empty() || !access.cert_file.empty();
  if (protocol == "http" && (tls_files || https_endpoints)) {
    return invalid(std::string(variable), "protocol=http",
                   "no TLS settings with it (cacert, cert and https:// endpoints need https)");
  }
  access.tls = protocol == "https" || tls_files || https_endpoints;
  if (access.cert_file.empty() != access.key_file.empty()) {
    return invalid(std::string(variable),
                   access.cert_file.empty() ? "key=" + access.key_file : "cert=" + access.cert_file,
                   "a client certificate and its key together (cert= and key=)");
  }
  for (auto [key, path] : {std::pair<const char*, const std::string*>{"cacert", &access.ca_file},
                           {"cert", &access.cert_file},
                           {"key", &access.key_file}}) {
    if (path->empty()) continue;
    if (auto readable = read_file(variable, key, *path); !readable) return readable.error();
  }
  const auto from_env = env.find(kPasswordVariable);
  if (!password_file.empty()) {
    auto text = read_file(variable, "password_file", password_file);
    if (!text) return text.error();
    access.password = std::move(*text);
    if (!access.password.empty() && access.password.back() == '\n') access.password.pop_back();
    if (!access.password.empty() && access.password.back() == '\r') access.password.pop_back();
    if (access.password.empty()) {
      return invalid(std::string(variable), "password_file=" + password_file,
                     "a file holding the password (it is empty)");
    }
  } else if (from_env != env.end() && !from_env->second.empty()) {
    access.password = from_env->second;
  }
  if (!access.user.empty() && access.password.empty()) {
    return missing(std::string(variable), "etcd user " + access.user +
                                              "'s password (password_file=FILE or " +
                                              std::string(kPasswordVariable) + ")");
  }
  if (access.user.empty() && !access.password.empty()) {
    return missing(std::string(variable), "user=NAME for the etcd password given");
  }
  return access;
}

}  // namespace aml::etcd
