// A torch store client on a raw socket, written from torch's protocol (store/torch/torch_wire.hpp),
// for the tests of the launcher's torch door and of the nodes' relays to it.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "store/torch/torch_wire.hpp"

namespace aml::torch_raw {

using store::torch::kValidateMagic;
using store::torch::Op;
using store::torch::put_bytes;
using store::torch::put_i64;
using store::torch::put_u32;

inline std::string str(std::string_view s) {
  std::string out;
  put_bytes(out, s);
  return out;
}
inline std::string u64(std::uint64_t v) {
  std::string out;
  put_i64(out, static_cast<std::int64_t>(v));
  return out;
}
inline std::string op(Op o) {  // the validated numbering
  return std::string(1, static_cast<char>(o));
}
// A connection to 127.0.0.1:port that has said nothing yet (-1: refused).
inline int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}
// The first request of a torch >= 2.2 client.
inline std::string validate() {
  std::string hello = op(Op::validate);
  put_u32(hello, kValidateMagic);
  return hello;
}
inline void say(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}
// What arrives within `ms`, up to `want` bytes; "EOF" appended when the connection closed.
inline std::string hear(int fd, std::size_t want, int ms = 2000) {
  std::string got;
  while (got.size() < want) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) break;
    char buffer[4096];
    ssize_t n = recv(fd, buffer, std::min(sizeof(buffer), want - got.size()), 0);
    if (n <= 0) return got + "EOF";
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got;
}

}  // namespace aml::torch_raw
