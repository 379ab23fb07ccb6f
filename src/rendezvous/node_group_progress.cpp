// What a launcher waiting for its round says while it waits (issue 63, wait_progress.hpp): one
// line when due, naming what it waits for, what it has heard and the time left.
#include <cctype>
#include <string>
#include <vector>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "store/launchers/handshake.hpp"

namespace aml {
namespace {

constexpr std::size_t kNamedAtMost = 8;  // a line, not a list of a thousand nodes

std::string listed(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < kNamedAtMost; ++i) {
    text += (i == 0 ? "" : ", ") + items[i];
  }
  if (items.size() > kNamedAtMost) {
    text += " and " + std::to_string(items.size() - kNamedAtMost) + " more";
  }
  return text;
}

// What a dial's reason means to someone waiting for node 0's store (`whose`: "node 0's
// launcher") or etcd ("etcd").
std::string dial_reason_text(const std::string& reason, const std::string& whose) {
  std::string lower = reason;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("refused") != std::string::npos && lower.find("connection") != std::string::npos)
    return "connection refused (nothing listens there yet: " + whose +
           " has not started, or listens on another port)";
  if (lower.find("no route") != std::string::npos)
    return "no route to host (the host is down, or a network or firewall between the nodes)";
  // The store client's own words for it (store/launchers/handshake.hpp), less the parenthesis.
  if (const auto unanswered = store::kHelloUnanswered.substr(1); reason.starts_with(unanswered))
    return whose + " did not answer this launcher's HELLO (" + reason.substr(unanswered.size()) +
           "): too busy or out of descriptors (its own log says which), or something else "
           "listens on the port";
  if (lower.find("timed out") != std::string::npos)
    return "timed out (no answer: the host is down, or a firewall drops the connection)";
  return reason;
}

}  // namespace

std::string NodeGroup::waiter_text(const NodeInfo& self) {
  if (self.node_rank < 0) return self.host;
  return std::string(self.per_process() ? "rank " : "node ") + std::to_string(self.node_rank) +
         " (" + self.host + ")";
}

std::string NodeGroup::rendezvous_text(const GroupOptions& options) {
  if (options.backend.kind == RendezvousBackend::Kind::etcd) {
    std::string endpoints;
    for (const std::string& endpoint : options.backend.endpoints) {
      endpoints += (endpoints.empty() ? "" : ", ") + endpoint;
    }
    return "the job's etcd at " + endpoints;
  }
  return "node 0's rendezvous store at " + options.master_addr + ":" +
         std::to_string(options.master_port);
}

void NodeGroup::say_dialing(const GroupOptions& options, const std::string& reason,
                            std::chrono::milliseconds left) {
  if (!options.say || (options.self.per_process() && options.self.node_rank != 0)) return;
  options.say("aml-launch: " + waiter_text(options.self) + ": waiting for " +
              rendezvous_text(options) + ": " +
              dial_reason_text(reason, options.backend.kind == RendezvousBackend::Kind::etcd
                                           ? "etcd"
                                           : "node 0's launcher") +
              "; " + seconds_text(std::chrono::duration_cast<std::chrono::seconds>(left)) +
              " of --rdzv-timeout " + seconds_text(options.rdzv_timeout) + " left\n");
}

void NodeGroup::say_progress(const std::string& what, Clock::time_point deadline,
                             const std::string& limit) {
  const auto now = Clock::now();
  if (!progress_.due(now)) return;
  progress_.said(now);
  if (said_spare_ || said_benched_ || !options_.say) return;
  if (options_.self.per_process() && options_.self.node_rank != 0) return;  // rank 0's says it
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(
      std::max(Clock::duration::zero(), deadline - now));
  options_.say("aml-launch: " + waiter_text(options_.self) + ": " + what + "; " +
               seconds_text(left) + " of " +
               (limit.empty() ? "--rdzv-timeout " + seconds_text(options_.rdzv_timeout) : limit) +
               " left\n");
}

std::string NodeGroup::arrivals_text() {
  std::vector<std::string> missing, come;
  int node = 0;
  for (const auto& keys : key_batches("node")) {
    auto infos = control_->get_all(keys, std::chrono::milliseconds(0));
    if (!infos) return "(the rendezvous did not answer: " + infos.error().message() + ")";
    for (const auto& info : *infos) {
      const int this_node = node++;
      const auto parsed = info ? node_info_from_json(*info) : std::nullopt;
      if (!parsed) {
        missing.push_back(std::to_string(this_node));
        continue;
      }
      come.push_back((options_.self.per_process() ? "rank " : "node ") + std::to_string(this_node) +
                     " at " + parsed->addr);
    }
  }
  const std::string of = " of " + std::to_string(options_.self.nnodes);
  if (missing.empty()) return "every " + members_word() + of + " has come";
  const bool one = missing.size() == 1;
  return members_word() + (one ? " " : "s ") + listed(missing) + of +
         (one ? " has not come" : " have not come") +
         " (come: " + (come.empty() ? std::string("none yet") : listed(come)) + ")";
}

std::string NodeGroup::publish_arrivals() {
  std::string text = arrivals_text();
  (void)control_->set(key("arrivals"), text);
  arrivals_said_ = Clock::now();
  return text;
}

std::string NodeGroup::node0_arrivals(RendezvousClient& from) {
  auto said = from.get(key("arrivals"), std::chrono::milliseconds(0));
  if (said && *said) return "node 0 says " + **said;
  return "node 0 has not said yet who has come";
}

std::chrono::milliseconds NodeGroup::lead_slice(Clock::time_point deadline) const {
  const auto now = Clock::now();
  const auto to_word = std::chrono::duration_cast<std::chrono::milliseconds>(
      arrivals_said_ + group_timing::kArrivalsEvery - now);
  return std::max(std::chrono::milliseconds(1),
                  std::min(progress_.slice(group_timing::left_until(deadline), now), to_word));
}

}  // namespace aml
