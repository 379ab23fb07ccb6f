#include "metrics/metrics_server.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

namespace aml {
namespace {

using Clock = std::chrono::steady_clock;

std::string response(const std::string& status, const std::string& type, const std::string& body,
                     bool head_only) {
  return "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         (head_only ? "" : body);
}

struct Connection {
  UniqueFd fd;
  std::string in;
  std::string out;
  std::size_t sent = 0;
  Clock::time_point deadline;
  bool answering = false;
};

}  // namespace

std::string metrics_response(const std::string& request,
                             const std::function<std::string()>& render) {
  // "GET /metrics HTTP/1.1": the method, the target (its query ignored), the version.
  const auto line_end = request.find_first_of("\r\n");
  const std::string line = request.substr(0, line_end);
  const auto first_space = line.find(' ');
  const auto second_space =
      first_space == std::string::npos ? std::string::npos : line.find(' ', first_space + 1);
  if (second_space == std::string::npos || line.compare(second_space + 1, 5, "HTTP/") != 0) {
    return response("400 Bad Request", "text/plain; charset=utf-8",
                    "aml-launch: a request line \"GET /metrics HTTP/1.1\" was expected\n", false);
  }
  const std::string method = line.substr(0, first_space);
  std::string target = line.substr(first_space + 1, second_space - first_space - 1);
  target = target.substr(0, target.find('?'));
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    return response("405 Method Not Allowed", "text/plain; charset=utf-8",
                    "aml-launch: only GET /metrics is served here\n", false);
  }
  if (target == "/metrics") {
    return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render(), head);
  }
  if (target == "/") {
    return response("200 OK", "text/plain; charset=utf-8",
                    "aml-launch: the job's metrics are at /metrics (Prometheus's text format)\n",
                    head);
  }
  return response("404 Not Found", "text/plain; charset=utf-8",
                  "aml-launch: nothing at " + target + "; the metrics are at /metrics\n", head);
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address, int port,
                                                            std::function<std::string()> render) {
  const std::string where = address + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    return invalid(
        "--metrics-port", where,
        "a numeric address of this host and a port (" + std::string(gai_strerror(rc)) + ")");
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> results(found, freeaddrinfo);
  UniqueFd fd(socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const int one = 1;
  if (fd) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (!fd || bind(fd.get(), found->ai_addr, found->ai_addrlen) != 0 || listen(fd.get(), 64) != 0) {
    return invalid("--metrics-port", where,
                   "an address and port this launcher can listen on (" +
                       std::string(std::strerror(errno)) +
                       "); --metrics-port 0 picks a free port and says it");
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length);
  const int bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<MetricsServer>(
      new MetricsServer(std::move(fd), address, bound_port, std::move(render)));
}

MetricsServer::MetricsServer(UniqueFd listener, std::string address, int port,
                             std::function<std::string()> render)
    : listener_(std::move(listener)),
      wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      address_(std::move(address)),
      port_(port),
      render_(std::move(render)) {}

void MetricsServer::serve() {
  if (thread_) return;
  thread_.emplace([this] { answer_scrapes(); },
                  [this] {
                    const std::uint64_t one = 1;
                    (void)!::write(wake_.get(), &one, sizeof one);
                  });
}

MetricsServer::~MetricsServer() { thread_.reset(); }

std::string MetricsServer::url() const {
  const bool v6 = address_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + address_ + "]" : address_) + ":" + std::to_string(port_) +
         "/metrics";
}

void MetricsServer::answer_scrapes() {
  UniqueFd epoll(epoll_create1(EPOLL_CLOEXEC));
  auto watch = [&epoll](int fd, std::uint32_t events, int op) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    epoll_ctl(epoll.get(), op, fd, &event);
  };
  watch(listener_.get(), EPOLLIN, EPOLL_CTL_ADD);
  watch(wake_.get(), EPOLLIN, EPOLL_CTL_ADD);
  std::map<int, Connection> connections;
  auto close_connection = [&](int fd) {
    epoll_ctl(epoll.get(), EPOLL_CTL_DEL, fd, nullptr);
    connections.erase(fd);
  };
  // Sends what it can; true when the connection is done with.
  auto send_some = [](Connection& c) {
    while (c.sent < c.out.size()) {
      const ssize_t n =
          ::send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<std::size_t>(n);
        continue;
      }
      return !(n < 0 && (errno == EAGAIN || errno == EINTR));
    }
    return true;
  };
  for (;;) {
    int timeout_ms = -1;
    const auto now = Clock::now();
    for (const auto& [fd, c] : connections) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count() + 1;
      timeout_ms = timeout_ms < 0
                       ? static_cast<int>(std::max<long long>(left, 0))
                       : std::min(timeout_ms, static_cast<int>(std::max<long long>(left, 0)));
    }
    epoll_event events[32];
    const int n = epoll_wait(epoll.get(), events, 32, timeout_ms);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_.get()) return;
      if (fd == listener_.get()) {
        for (;;) {
          UniqueFd client(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
          if (!client) break;
          if (connections.size() >= static_cast<std::size_t>(kMaxConnections)) {
            // Full: the oldest that has not asked yet makes room; where every one is being
            // answered, the newcomer is closed.
            auto oldest = connections.end();
            for (auto it = connections.begin(); it != connections.end(); ++it) {
              if (!it->second.answering &&
                  (oldest == connections.end() || it->second.deadline < oldest->second.deadline))
                oldest = it;
            }
            if (oldest == connections.end()) continue;
            epoll_ctl(epoll.get(), EPOLL_CTL_DEL, oldest->first, nullptr);
            connections.erase(oldest);
          }
          const int client_fd = client.get();
          Connection& c = connections[client_fd];
          c.fd = std::move(client);
          c.deadline = Clock::now() + kExchangeTime;
          watch(client_fd, EPOLLIN, EPOLL_CTL_ADD);
        }
        continue;
      }
      auto found = connections.find(fd);
      if (found == connections.end()) continue;
      Connection& c = found->second;
      if (!c.answering) {
        char buffer[4096];
        const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
          close_connection(fd);
          continue;
        }
        if (got > 0) c.in.append(buffer, static_cast<std::size_t>(got));
        const bool whole =
            c.in.find("\r\n\r\n") != std::string::npos || c.in.find("\n\n") != std::string::npos;
        if (!whole && c.in.size() < kRequestBytes) continue;
        c.out = whole ? metrics_response(c.in, render_)
                      : "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: "
                        "0\r\nConnection: close\r\n\r\n";
        c.in.clear();
        c.answering = true;
        watch(fd, EPOLLOUT, EPOLL_CTL_MOD);
      }
      if (send_some(c)) {
        // What the client sent beyond its request, read first: a close with unread bytes
        // would reset the connection, and the answer with it.
        char rest[4096];
        while (::recv(fd, rest, sizeof rest, MSG_DONTWAIT) > 0) {
        }
        ::shutdown(fd, SHUT_WR);
        close_connection(fd);
      }
    }
    const auto after = Clock::now();
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->second.deadline <= after) {
        epoll_ctl(epoll.get(), EPOLL_CTL_DEL, it->first, nullptr);
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace aml
