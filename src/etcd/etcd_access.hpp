// How a launcher reaches a guarded etcd (DESIGN §5, "Rendezvous backends"): TLS (the CA that
// vouches for etcd's members, a client certificate and key where etcd asks for one) and etcd's
// own users (a name and a password). torchrun's --rdzv-conf spellings are taken, both its etcd
// backends' (cacert, cert, key; ca_cert, ssl_cert, ssl_cert_key), with protocol=https.
#pragma once

#include <aml/error.hpp>
#include <string>
#include <string_view>

#include "topology/env.hpp"

namespace aml::etcd {

// The password never goes on a command line (every user of the node can read those): a file,
// or this variable, which the launcher removes before anything starts.
inline constexpr std::string_view kPasswordVariable = "AML_LAUNCH_ETCD_PASSWORD";

// How unary calls reach etcd: its gRPC API where libnghttp2 opens (else the JSON gateway),
// or one of them as --rdzv-conf transport= says. Watches use the gateway either way.
enum class Transport { automatic, grpc, gateway };

struct Access {
  bool tls = false;
  std::string ca_file;    // "": the system's trusted CAs
  std::string cert_file;  // a client certificate (etcd's --client-cert-auth), with key_file
  std::string key_file;
  std::string user;  // "": etcd without authentication
  std::string password;
  Transport transport = Transport::automatic;

  // For --dry-run and errors, never the password: "TLS (CA ca.pem, client certificate
  // c.pem), user trainer".
  std::string describe() const;
};

// Reads `conf` ("key=value,key=value", from `variable`: --rdzv-conf or PET_RDZV_CONF).
// https_endpoints: an endpoint was given as https://. The password comes from password_file=
// or kPasswordVariable in env. Every file named must be readable; an unknown key is an error
// naming those known.
Result<Access> parse_access(std::string_view variable, std::string_view conf, bool https_endpoints,
                            const Env& env);

}  // namespace aml::etcd
