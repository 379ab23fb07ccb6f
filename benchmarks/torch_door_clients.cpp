// N simulated ranks of a torch job meeting at a store in torch's own protocol, in one process on
// epoll: the shape of init_process_group's start under TORCHELASTIC_USE_AGENT_STORE=True. The
// legacy numbering (torch <= 2.1's clients; torch 1.13's server and the launcher's door speak
// it), or with TORCH_WIRE=validated torch >= 2.2's: VALIDATE first, then its numbering (the
// libuv server of torch >= 2.4 and the launcher's door speak it).
// Each rank connects, rank 0 sets its key (Gloo's addresses, NCCL's unique id), every rank
// adds itself to the barrier's count, the one that completes it sets "go", and every rank
// waits for "go" and rank 0's key, then reads rank 0's key. Prints when its first rank began to
// connect and when its last rank had read it (seconds on the monotonic clock, so that the
// slices of one job run by several processes can be put together).
//   usage: torch_door_clients PORT N                  all N ranks at one store port
//          torch_door_clients PORTS_FILE N FIRST COUNT PER_NODE
//             ranks FIRST to FIRST+COUNT-1 of N, rank r at the (r / PER_NODE)-th port of the
//             file (a node's relay)
// (its descriptor limit must allow the ranks it runs)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}
std::uint64_t u64_at(const std::string& b, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

enum class Phase { connecting, added, waited, done };

struct Rank {
  int fd = -1;
  Phase phase = Phase::connecting;
  std::string in, out;
};

// torch <= 2.1's numbering; validated() moves them to torch >= 2.2's.
char kSet = 0, kGet = 2, kAdd = 3, kWait = 5;
bool validated() {
  const char* wire = std::getenv("TORCH_WIRE");
  return wire != nullptr && std::string(wire) == "validated";
}
const std::string kRank0Key = "/rank0", kArrived = "/arrived", kGo = "/go";

}  // namespace

double monotonic_seconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 6) return 2;
  if (validated()) kSet = 1, kGet = 3, kAdd = 4, kWait = 6;
  const int n = std::atoi(argv[2]);
  const int first = argc == 6 ? std::atoi(argv[3]) : 0;
  const int count = argc == 6 ? std::atoi(argv[4]) : n;
  const int per_node = argc == 6 ? std::atoi(argv[5]) : n;
  std::vector<int> ports;
  if (argc == 6) {
    std::ifstream file(argv[1]);
    for (int p; file >> p;) ports.push_back(p);
    if (static_cast<long>(ports.size()) * per_node < n) {
      std::fprintf(stderr, "%zu ports for %d ranks of %d a node\n", ports.size(), n, per_node);
      return 1;
    }
  } else {
    ports.push_back(std::atoi(argv[1]));
  }
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_max < static_cast<rlim_t>(count) + 64) {
    std::fprintf(stderr, "%d ranks need %d descriptors; this process may have %lu\n", count,
                 count + 64, static_cast<unsigned long>(limit.rlim_max));
    return 1;
  }
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  const int epoll = epoll_create1(0);
  std::vector<Rank> ranks(static_cast<std::size_t>(count));
  const auto start = std::chrono::steady_clock::now();
  int done = 0, connected = 0;
  auto send_some = [&](int i) {
    Rank& r = ranks[static_cast<std::size_t>(i)];
    while (!r.out.empty()) {
      ssize_t sent = send(r.fd, r.out.data(), r.out.size(), MSG_NOSIGNAL);
      if (sent <= 0) break;
      r.out.erase(0, static_cast<std::size_t>(sent));
    }
  };
  // Connects are opened as the kernel takes them: at most this many in flight at once.
  constexpr int kInFlight = 2048;
  int opened = 0;
  auto open_more = [&] {
    while (opened < count && opened - connected < kInFlight) {
      const int i = opened++;
      Rank& r = ranks[static_cast<std::size_t>(i)];
      r.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (r.fd < 0) {
        std::perror("socket");
        std::exit(1);
      }
      int one = 1;
      setsockopt(r.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      // The port is chosen at connect, for the whole 4-tuple: bind's own choice searches past
      // every TIME_WAIT of the run before, which made a run after the first 10-50x slower.
      setsockopt(r.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
      // A source address of its own per 16,384 ranks: loopback's ports run out before that.
      sockaddr_in from{};
      from.sin_family = AF_INET;
      from.sin_addr.s_addr = htonl(0x7f000002u + static_cast<std::uint32_t>((first + i) / 16384));
      bind(r.fd, reinterpret_cast<sockaddr*>(&from), sizeof(from));
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(
          static_cast<std::uint16_t>(ports[static_cast<std::size_t>((first + i) / per_node)]));
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connect(r.fd, reinterpret_cast<sockaddr*>(&to), sizeof(to));
      epoll_event event{};
      event.events = EPOLLIN | EPOLLOUT;
      event.data.u32 = static_cast<std::uint32_t>(i);
      epoll_ctl(epoll, EPOLL_CTL_ADD, r.fd, &event);
    }
  };
  open_more();
  std::vector<epoll_event> events(4096);
  while (done < count) {
    const int ready = epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 60000);
    if (ready <= 0) {
      std::fprintf(stderr, "stalled: %d of %d ranks done, %d connected\n", done, count, connected);
      return 1;
    }
    for (int e = 0; e < ready; ++e) {
      const int i = static_cast<int>(events[e].data.u32);
      Rank& r = ranks[static_cast<std::size_t>(i)];
      if (events[e].events & (EPOLLERR | EPOLLHUP)) {
        std::fprintf(stderr, "rank %d: connection failed or closed\n", i);
        return 1;
      }
      if (r.phase == Phase::connecting && (events[e].events & EPOLLOUT)) {
        ++connected;
        if (validated()) {  // VALIDATE 0x3C85F7CE: no reply
          r.out += '\0';
          for (int b = 0; b < 4; ++b) r.out += static_cast<char>((0x3C85F7CEu >> (8 * b)) & 0xff);
        }
        if (first + i == 0) {
          r.out += kSet;
          put_str(r.out, kRank0Key);
          put_str(r.out, std::string(128, 'u'));  // NCCL's unique id is 128 bytes
        }
        r.out += kAdd;
        put_str(r.out, kArrived);
        put_u64(r.out, 1);
        r.phase = Phase::added;
        send_some(i);
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.u32 = static_cast<std::uint32_t>(i);
        epoll_ctl(epoll, EPOLL_CTL_MOD, r.fd, &event);
        open_more();
      }
      if (!(events[e].events & EPOLLIN)) continue;
      char buffer[4096];
      ssize_t got = recv(r.fd, buffer, sizeof(buffer), 0);
      if (got <= 0) {
        std::fprintf(stderr, "rank %d: the store closed the connection\n", i);
        return 1;
      }
      r.in.append(buffer, static_cast<std::size_t>(got));
      if (r.phase == Phase::added && r.in.size() >= 8) {
        const std::uint64_t count = u64_at(r.in, 0);
        r.in.erase(0, 8);
        if (count == static_cast<std::uint64_t>(n)) {
          r.out += kSet;
          put_str(r.out, kGo);
          put_str(r.out, "1");
        }
        r.out += kWait;
        put_u64(r.out, 2);
        put_str(r.out, kGo);
        put_str(r.out, kRank0Key);
        r.phase = Phase::waited;
        send_some(i);
      }
      if (r.phase == Phase::waited && r.in.size() >= 1) {
        r.in.erase(0, 1);
        r.out += kGet;
        put_str(r.out, kRank0Key);
        r.phase = Phase::done;
        send_some(i);
      }
      if (r.phase == Phase::done && r.in.size() >= 8 && r.in.size() >= 8 + u64_at(r.in, 0)) {
        if (u64_at(r.in, 0) != 128) {
          std::fprintf(stderr, "rank %d: rank 0's key came back wrong\n", i);
          return 1;
        }
        r.in.clear();
        ++done;
        epoll_ctl(epoll, EPOLL_CTL_DEL, r.fd, nullptr);
      }
    }
  }
  std::printf("%.6f %.6f\n", monotonic_seconds(start),
              monotonic_seconds(std::chrono::steady_clock::now()));
  return 0;
}
