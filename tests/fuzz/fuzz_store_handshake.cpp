// libFuzzer target over the store's admission (DESIGN §5): a real server with a job secret,
// in this process, and a client connection that sends whatever the fuzzer makes, in pieces.
// Whatever arrives, the server neither crashes nor leaks, and no byte stream made without the
// job's key ever gets a connection admitted.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include "store/core/store_server.hpp"
#include "store/launchers/handshake.hpp"

namespace {

aml::store::StoreServer& server() {
  static std::unique_ptr<aml::store::StoreServer> instance = [] {
    aml::store::ServerOptions options;
    options.token = "job";
    options.auth = {aml::store::AuthKind::key,
                    aml::store::role_key("the job's secret", "job", aml::store::Role::launcher),
                    aml::store::role_key("the job's secret", "job", aml::store::Role::worker)};
    options.log = [](const std::string&) {};
    auto listening = aml::store::StoreServer::listen("127.0.0.1", 0, options);
    if (!listening) __builtin_trap();
    return std::move(*listening);
  }();
  return *instance;
}

// A connection that ends with a reset, not in TIME_WAIT, from a loopback address of its own
// (127.1.x.y, one after another): a minute of runs would otherwise use up the ephemeral ports,
// the server's side of the connections it closed first lingering in TIME_WAIT (seen at 14k
// runs on a busy machine). A connect that libFuzzer's timeout alarm interrupts (EINTR: its
// SIGALRM handler has no SA_RESTART, and on a busy machine the loopback handshake can sleep)
// is tried again on a fresh socket (seen once at 21k runs beside a parallel build).
int connect_to(int port) {
  static std::uint32_t next_source = 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = errno;  // out of descriptors: the server kept connections it should have closed
      break;
    }
    linger reset{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = htonl(0x7f010001u + (next_source++ % 60000u));
    (void)bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
    error = errno;
    close(fd);
    if (error == EINTR) continue;
    if (error != EADDRNOTAVAIL) break;
    usleep(10000);  // ports still closing: not the server's doing
  }
  std::fprintf(stderr, "fuzz_store_handshake: cannot connect to the server: %s\n",
               std::strerror(error));
  __builtin_trap();  // the server's listener stopped taking connections
}

// Reads what the server sent; false once it closed the connection.
bool still_open(int fd) {
  char buffer[4096];
  while (true) {
    ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) return errno != ECONNRESET && errno != EPIPE;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  aml::store::StoreServer& s = server();
  const std::size_t piece = 1 + bytes[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  int fd = connect_to(s.port());
  s.poll_once(0);  // accepted
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    std::string_view part = stream.substr(at, piece);
    if (send(fd, part.data(), part.size(), MSG_NOSIGNAL) < 0) break;
    s.poll_once(0);
    if (!still_open(fd)) break;
  }
  s.poll_once(0);
  if (s.connection_count() != s.unproven_count()) __builtin_trap();  // admitted without the key
  close(fd);
  for (int i = 0; i < 4 && s.connection_count() > 0; ++i) s.poll_once(1);
  return 0;
}
