// Simulated node agents for benchmarks/store_rendezvous.py. Each agent: connect from its own
// source address (127.1.x.y, as a real node has its own IP) + HELLO, set its address key, add
// to the arrival counter, get the next agent's key, wait for "go". All agents of this process
// run at once as non-blocking state machines on one epoll.
//   usage: store_bench_agents PORT TOKEN FIRST COUNT TOTAL
//          store_bench_agents coordinate PORT TOKEN TOTAL   (sets "go" once all arrived)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <aml/store.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "store/launchers/handshake.hpp"
#include "store/launchers/wire.hpp"

using aml::store::FrameWriter;
using aml::store::Opcode;

namespace {

struct Agent {
  int fd = -1;
  int step = 0;  // which reply is awaited next
  std::string out;
  std::size_t sent = 0;
  std::string in;
};

std::string request(int step, int index, int total, const std::string& token) {
  auto op = [](Opcode o) { return FrameWriter().u8(static_cast<std::uint8_t>(o)); };
  switch (step) {
    case 0:
      // A launcher of a job without a secret: no nonce, nothing to prove.
      return op(Opcode::hello)
          .u32(aml::store::kMagic)
          .u16(aml::store::kVersion)
          .str(token)
          .u8(static_cast<std::uint8_t>(aml::store::AuthKind::none))
          .u8(static_cast<std::uint8_t>(aml::store::Role::launcher))
          .str("node/" + std::to_string(index))
          .str("")
          .finish();
    case 1:
      return op(Opcode::set).str("node/" + std::to_string(index)).str("127.1.0.1:29500").finish();
    case 2:
      return op(Opcode::add).str("arrived").i64(1).finish();
    case 3:
      return op(Opcode::get).str("node/" + std::to_string((index + 1) % total)).u32(60000).finish();
    default:
      return op(Opcode::wait).u32(1).str("go").u32(60000).finish();
  }
}

int coordinate(int port, const std::string& token, int total) {
  auto client = aml::StoreClient::connect("127.0.0.1", port, token, std::chrono::seconds(30));
  if (!client) return std::fprintf(stderr, "%s\n", client.error().message().c_str()), 1;
  while (true) {
    auto arrived = client->add("arrived", 0);
    if (!arrived) return 1;
    if (*arrived >= total) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return client->set("go", "1") ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "coordinate")
    return coordinate(std::atoi(argv[2]), argv[3], std::atoi(argv[4]));
  if (argc != 6) return 2;
  const int port = std::atoi(argv[1]);
  const std::string token = argv[2];
  const int first = std::atoi(argv[3]), count = std::atoi(argv[4]), total = std::atoi(argv[5]);
  int epoll = epoll_create1(EPOLL_CLOEXEC);
  std::vector<Agent> agents(count);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < count; ++i) {
    int index = first + i;
    Agent& a = agents[i];
    a.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (a.fd < 0) return std::perror("socket"), 1;
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | static_cast<unsigned>(index + 1));
    if (bind(a.fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0)
      return std::perror("bind"), 1;
    int one = 1;
    setsockopt(a.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    a.out = request(0, index, total, token);
  }
  // Sockets are made and bound; the driver starts every process's agents at once.
  std::printf("ready\n");
  std::fflush(stdout);
  char go;
  if (read(STDIN_FILENO, &go, 1) != 1) return 1;
  for (int i = 0; i < count; ++i) {
    Agent& a = agents[i];
    if (connect(a.fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) != 0 &&
        errno != EINPROGRESS) {
      return std::perror("connect"), 1;
    }
    epoll_event event{};
    event.events = EPOLLIN | EPOLLOUT;
    event.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(epoll, EPOLL_CTL_ADD, a.fd, &event);
  }
  int done = 0;
  std::vector<epoll_event> events(1024);
  char buffer[4096];
  while (done < count) {
    int n = epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 60000);
    if (n <= 0) return std::fprintf(stderr, "agents: stuck with %d of %d done\n", done, count), 1;
    for (int e = 0; e < n; ++e) {
      Agent& a = agents[events[e].data.u32];
      const int index = first + static_cast<int>(events[e].data.u32);
      if (events[e].events & (EPOLLERR | EPOLLHUP))
        return std::fprintf(stderr, "agent %d: connection lost\n", index), 1;
      if ((events[e].events & EPOLLOUT) && a.sent < a.out.size()) {
        ssize_t w = send(a.fd, a.out.data() + a.sent, a.out.size() - a.sent, MSG_NOSIGNAL);
        if (w > 0) a.sent += static_cast<std::size_t>(w);
        if (a.sent == a.out.size()) {
          epoll_event event{};
          event.events = EPOLLIN;
          event.data.u32 = events[e].data.u32;
          epoll_ctl(epoll, EPOLL_CTL_MOD, a.fd, &event);
        }
      }
      if (!(events[e].events & EPOLLIN)) continue;
      ssize_t r = recv(a.fd, buffer, sizeof(buffer), 0);
      if (r <= 0) continue;
      a.in.append(buffer, static_cast<std::size_t>(r));
      if (a.in.size() < 4) continue;
      std::uint32_t length = 0;
      std::memcpy(&length, a.in.data(), 4);
      if (a.in.size() < 4 + length) continue;
      if (a.in[4] != 0)
        return std::fprintf(stderr, "agent %d: step %d refused\n", index, a.step), 1;
      a.in.erase(0, 4 + length);
      if (++a.step == 5) {
        ++done;
        close(a.fd);
        continue;
      }
      a.out = request(a.step, index, total, token);
      a.sent = 0;
      ssize_t w = send(a.fd, a.out.data(), a.out.size(), MSG_NOSIGNAL);
      if (w > 0) a.sent = static_cast<std::size_t>(w);
      if (a.sent < a.out.size()) {
        epoll_event event{};
        event.events = EPOLLIN | EPOLLOUT;
        event.data.u32 = events[e].data.u32;
        epoll_ctl(epoll, EPOLL_CTL_MOD, a.fd, &event);
      }
    }
  }
  return 0;
}
