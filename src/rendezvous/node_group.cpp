#include "rendezvous/node_group.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "net/local_host.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/store_rendezvous.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
using std::chrono::milliseconds;
using namespace group_timing;

std::string NodeGroup::member_name(const NodeInfo& self) {
  return "the launcher on " + self.host + " (pid " + std::to_string(self.pid) + ")";
}

Result<std::unique_ptr<NodeGroup>> NodeGroup::start(GroupOptions options, RendezvousEngine engine) {
  std::unique_ptr<StoreHost> host = std::move(engine.host);
  // Node 0 of node 0's store dials its own; the others say why they wait while they do.
  WaitProgress progress;
  auto control = attempt_saying<std::unique_ptr<RendezvousClient>>(
      progress, options.rdzv_timeout, engine.dial,
      [&options](const std::string& reason, milliseconds left) {
        say_dialing(options, reason, left);
      });
  if (!control) {
    Error error = control.error();
    error.expected +=
        " (" +
        (options.self.node_rank >= 0 ? "node " + std::to_string(options.self.node_rank)
                                     : std::string("this node")) +
        " joining node 0's rendezvous store at MASTER_ADDR=" + options.master_addr +
        " MASTER_PORT=" + std::to_string(options.master_port) + " within --rdzv-timeout " +
        seconds_text(options.rdzv_timeout) + ")";
    return error;
  }
  (*control)->set_reply_timeout(std::max(kShortestReplyTimeout, options.node_timeout));
  options.self.addr = host ? options.master_addr : (*control)->local_address();
  return std::unique_ptr<NodeGroup>(new NodeGroup(
      std::move(options), std::move(host), std::move(*control), std::move(engine.dial), progress));
}

NodeGroup::NodeGroup(GroupOptions options, std::unique_ptr<StoreHost> host,
                     std::unique_ptr<RendezvousClient> control, Dialer dial, WaitProgress progress)
    : options_(std::move(options)),
      host_(std::move(host)),
      control_(std::move(control)),
      dial_(std::move(dial)),
      progress_(progress) {}

// The connections (declared after host_) close before the store they talk to stops.
NodeGroup::~NodeGroup() {
  disarm_tripwire();
  if (host_ && round_ >= 0) wait_for_verdict_readers();
}

// Node 0's store goes away with it: first every other node that is alive reads the job's
// verdict (one verdict on every node, DESIGN §5), bounded by --node-timeout. A node the
// verdict names as lost cannot read it and is not waited for.
void NodeGroup::wait_for_verdict_readers() {
  auto stored = control_->get(key("abort"), milliseconds(0));
  if (!stored || !*stored || **stored == kComplete) return;
  // The node it names reported it (or was found lost): it is not waited for.
  auto verdict = job_failure_from_json(**stored);
  const int lost = verdict ? verdict->member_or_node() : -1;
  const auto deadline = Clock::now() + options_.node_timeout;
  for (const auto& readers : key_batches("heard", 1, lost)) {
    auto all = control_->wait(readers, left_until(deadline));
    if (!all || !*all) return;
  }
}

std::vector<std::vector<std::string>> NodeGroup::key_batches(const std::string& name, int first,
                                                             int skip) const {
  std::vector<std::vector<std::string>> batches;
  for (int node = first; node < options_.self.nnodes; ++node) {
    if (node == skip) continue;
    if (batches.empty() || batches.back().size() == kKeysPerCall) batches.emplace_back();
    batches.back().push_back(node_key(name, node));
  }
  return batches;
}

milliseconds NodeGroup::watch_interval() const {
  return std::clamp(options_.node_timeout / 3, kShortestWatch, kLongestWatch);
}

milliseconds NodeGroup::beat_interval() const {
  return std::clamp(options_.node_timeout / 10, kFastestBeat, kSlowestBeat);
}

std::string NodeGroup::members_word() const {
  return options_.self.per_process() ? "rank" : "node rank";
}

std::string NodeGroup::key(const std::string& name) const {
  return "aml/" + phase_ + "/" + std::to_string(round_) + "/" + name;
}

std::string NodeGroup::round_key(int round, const std::string& name) const {
  return "aml/" + joining_phase_ + "/" + std::to_string(round) + "/" + name;
}

std::string NodeGroup::node_key(const std::string& name, int node) const {
  return key(name + "/" + std::to_string(node));
}

std::string NodeGroup::round_name() const {
  return phase_ + " round " + std::to_string(round_) + " of run " + options_.self.run_id;
}

std::string NodeGroup::store_address() const {
  if (node0_serves_own_store()) {
    return node0_address() + ":" + std::to_string(agreement_.worker_store_port);
  }
  return options_.master_addr + ":" + std::to_string(options_.master_port);
}

std::string NodeGroup::node0_address() const {
  if (options_.self.node_rank == 0) return options_.self.addr;
  return agreement_.nodes.empty() ? options_.master_addr : agreement_.nodes.front().addr;
}

int NodeGroup::fd() const { return events_ ? events_.get() : watch_ ? watch_->fd() : -1; }

int NodeGroup::next_poll_ms() const {
  if (tripwire_due_) return 0;
  auto left = std::chrono::duration_cast<milliseconds>(next_tick_ - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left + 1, 0, beat_interval().count()));
}

}  // namespace aml
