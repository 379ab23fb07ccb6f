// How a connection comes to the store server: accepted at its own socket, or handed over from
// another server's (adopt, torch_doorway.hpp); and, where torch's door is behind the socket,
// which door its first bytes choose (first_bytes.hpp).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "net/address_text.hpp"
#include "store/core/first_bytes.hpp"
#include "store/core/store_connection.hpp"
#include "store/core/store_server.hpp"

namespace aml::store {

// At most this many new connections a turn of the loop: the members' requests come between.
constexpr int kAcceptsPerTurn = 128;

void StoreServer::accept_all() {
  for (int accepted = 0; accepted < kAcceptsPerTurn; ++accepted) {
    sockaddr_storage from{};
    socklen_t from_length = sizeof(from);
    int fd = accept4(listener_.get(), reinterpret_cast<sockaddr*>(&from), &from_length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if ((errno == EMFILE || errno == ENFILE) && !unproven_.empty()) {
        evict_oldest_unproven("out of file descriptors: the oldest unproven connection made room");
        continue;
      }
      if (errno == EMFILE || errno == ENFILE) {
        // Nothing to evict: leave the rest in the backlog until the next check, rather than
        // wake for them at once again.
        epoll_event event{};
        event.data.u64 = kListenerEvent;
        epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &event);
        listener_paused_ = true;
      }
      return;  // EAGAIN: no more for now
    }
    if (connections_.size() >= options_.max_connections) {
      ::close(fd);
      continue;
    }
    std::string peer = address_text(reinterpret_cast<const sockaddr*>(&from));
    const bool torch = options_.door == Door::torch;
    if (torch && options_.admitted && !options_.admitted->admits(peer)) {
      // Not one of the job's hosts: closed before it can say a word.
      ::close(fd);
      refusals_.refused(peer, "not one of the job's hosts (the workers' store admits them alone)",
                        Clock::now());
      continue;
    }
    if (!torch && unproven_.size() >= options_.max_unproven) {
      evict_oldest_unproven("over " + std::to_string(options_.max_unproven) +
                            " connections that had not proven themselves: the oldest went");
    }
    Connection& c = add_connection(UniqueFd(fd), std::move(peer));
    // With torch's door behind it, a connection's first bytes choose (first_bytes.hpp).
    c.undecided = !torch && options_.torch_doorway != nullptr;
  }
}

StoreServer::Connection& StoreServer::add_connection(UniqueFd fd, std::string peer) {
  const bool torch = options_.door == Door::torch;
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto c = std::make_unique<Connection>(options_.max_unproven_frame);
  c->id = next_id_++;
  c->fd = std::move(fd);
  c->last_progress = c->accepted_at = Clock::now();
  c->peer = std::move(peer);
  // torch's door admits by address: its connections are the job's from their accept.
  c->torch = c->authenticated = torch;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = c->id;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c->fd.get(), &event);
  if (!torch) unproven_.insert(c->id);
  return *connections_.emplace(c->id, std::move(c)).first->second;
}

void StoreServer::choose_door(Connection& c, bool late) {
  const FirstBytes door = door_for(c.in);
  if (door == FirstBytes::undecided && !late) {
    if (!c.in.empty()) prefix_only_.insert(c.id);
    return;
  }
  c.undecided = false;
  prefix_only_.erase(c.id);
  if (door == FirstBytes::launchers) {
    c.decoder.feed(c.in);
    std::string().swap(c.in);
    return;
  }
  hand_to_torch(c);
}

void StoreServer::choose_late() {
  const auto now = Clock::now();
  std::vector<std::uint64_t> late;
  for (std::uint64_t id : prefix_only_) {
    if (now - connections_.at(id)->last_progress >= kPrefixWait) late.push_back(id);
  }
  for (std::uint64_t id : late) choose_door(*connections_.at(id), true);
}

void StoreServer::hand_to_torch(Connection& c) {
  const std::uint64_t id = c.id;
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
  UniqueFd fd = std::move(c.fd);
  const std::string peer = c.peer;
  std::string bytes = std::move(c.in);
  unproven_.erase(id);
  connections_.erase(id);
  switch (options_.torch_doorway->hand(std::move(fd), peer, std::move(bytes))) {
    case TorchDoorway::Handed::taken:
      return;
    case TorchDoorway::Handed::stranger:
      return refusals_.refused(
          peer, "not one of the job's hosts (the workers' store admits them alone)", Clock::now());
    case TorchDoorway::Handed::closed:
      return refusals_.refused(peer, "torch's protocol while no round's workers' store is open",
                               Clock::now());
  }
}

void StoreServer::adopt(UniqueFd fd, std::string peer, std::string first_bytes) {
  {
    std::lock_guard lock(adopted_mutex_);
    adopted_.push_back({std::move(fd), std::move(peer), std::move(first_bytes)});
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakeup_.get(), &one, sizeof(one));
}

void StoreServer::take_adopted() {
  std::vector<Adopted> taken;
  {
    std::lock_guard lock(adopted_mutex_);
    taken.swap(adopted_);
  }
  for (Adopted& a : taken) {
    if (connections_.size() >= options_.max_connections) continue;  // closed as it goes
    Connection& c = add_connection(std::move(a.fd), std::move(a.peer));
    c.in = std::move(a.bytes);
    process_torch(c);
  }
}

}  // namespace aml::store
