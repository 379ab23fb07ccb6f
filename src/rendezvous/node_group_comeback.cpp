// A waiting launcher that lost the rendezvous comes back to it (DESIGN §5).
//
// Node 0's store that went away: with node 0's store, the store goes away with node 0's
// launcher. Where its address serves again (Kubernetes restarts worker-0's pod under the same
// name; a scale set replaces the VM under the same host name), the survivors keep their places:
// their workers stopped, they wait up to --rdzv-timeout, join the new node 0 and tell it the
// job's state (the round to resume, the restarts used; each its own node rank in its slot), and
// the next round runs. Nobody elects a standby: the survivors only wait for the one address.
// The same store that only stopped answering this node (it was cut off or paused past
// --node-timeout: the store counted it gone) takes it back the same way, as a newcomer.
//
// etcd: a launcher silent past its lease (a pause, a cut) was counted lost, and its lease is
// gone with its wills. It takes a new lease in the same run of the job and waits for a seat
// as a newcomer (benched where the bench allows, as a lost node is), instead of leaving. One
// whose lease lived through (etcd without a leader, which ends no lease) may have been seated
// while it was away: it looks at its place in the round it waited for first, where the round's
// members wait for it (as its node 0, for its verdict).
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

// Whether a failed wait was the rendezvous lost: an etcd error (a call no member answered, a
// watch that ended, the lease's end; not a request etcd refused), or node 0's store out of reach
// now.
bool NodeGroup::rendezvous_lost(const Error& error) {
  if (!options_.elastic || host_) return false;
  if (on_etcd()) {
    return error.variable == "etcd" || error.variable == "etcd lease" ||
           control_->ask_lease_ended();
  }
  return !control_->check({std::string(kNextRoundKey)}).ok();  // out of reach
}

Result<int> NodeGroup::come_back(int round) {
  forget_connections();
  // A new connection (a new lease) holds none of the old one's wills, nor its number.
  gone_will_set_ = false;
  launcher_id_ = -1;
  said_spare_ = false;  // what it waits as is said again: a new entry into the job
  return on_etcd() ? take_new_lease(round) : rejoin_store(round);
}

void NodeGroup::forget_connections() {
  watch_.reset();
  notice_watch_.reset();
  seat_watch_.reset();
  seat_watch_round_ = -1;
}

Result<int> NodeGroup::take_new_lease(int round) {
  // Cut off from etcd, a node cannot know its lease's fate: it waits for a member to answer
  // (up to --rdzv-timeout), and goes on under its lease where it still lives.
  const auto deadline = Clock::now() + options_.rdzv_timeout;
  for (bool said = false;
       !control_->ask_lease_ended() && !control_->check({std::string(kNextRoundKey)}).ok();
       said = true) {
    if (Clock::now() >= deadline) {
      return invalid("rendezvous", rendezvous_text(options_),
                     "etcd to answer this node again within --rdzv-timeout " +
                         seconds_text(options_.rdzv_timeout));
    }
    if (!said && options_.say) {
      options_.say("aml-launch: " + options_.self.host + ": the job's etcd is out of this " +
                   "node's reach; it waits up to --rdzv-timeout " +
                   seconds_text(options_.rdzv_timeout) + " for it\n");
    }
    usleep(200000);
  }
  // Its lease lived through: a seat may have come while etcd was out of reach (its place in
  // the round it waited for says so), and that round's members wait for it there.
  if (!control_->lease_ended()) return std::max(round, seat_round_);
  seat_round_ = -1;  // a place under the old lease is nobody's now
  if (options_.say) {
    options_.say("aml-launch: " + options_.self.host +
                 ": this node's etcd lease ended (it was silent for over --node-timeout " +
                 seconds_text(options_.node_timeout) +
                 ": paused, starved or cut off) and the job counted it lost; it takes a new "
                 "lease and waits for a seat as a newcomer\n");
  }
  // The dial takes the new lease; the old one's session goes with its last connection.
  auto control = dial_(options_.rdzv_timeout);
  if (!control) {
    Error error = control.error();
    error.expected += " (this node taking a new etcd lease within --rdzv-timeout " +
                      seconds_text(options_.rdzv_timeout) + ")";
    return error;
  }
  (*control)->set_reply_timeout(std::max(kShortestReplyTimeout, options_.node_timeout));
  control_ = std::move(*control);
  last_answer_ = Clock::now();
  return round;
}

Result<int> NodeGroup::rejoin_store(int round) {
  const std::string where = options_.master_addr + ":" + std::to_string(options_.master_port);
  const std::string limit = seconds_text(options_.rdzv_timeout);
  if (options_.say) {
    options_.say("aml-launch: " + options_.self.host + ": node 0's store at " + where +
                 " went away or stopped answering this node (node 0 lost, or this node cut off "
                 "or paused past --node-timeout); this node keeps its place" +
                 (options_.self.node_rank >= 0
                      ? " (node rank " + std::to_string(options_.self.node_rank) + ")"
                      : std::string()) +
                 " and waits up to --rdzv-timeout " + limit + " to reach it again\n");
  }
  // A store coming up may refuse a moment (its port taken before it serves): try again until
  // the deadline.
  const auto deadline = Clock::now() + options_.rdzv_timeout;
  auto control = dial_(options_.rdzv_timeout);
  while (!control && Clock::now() < deadline) {
    usleep(100000);
    control = dial_(left_until(deadline));
  }
  if (!control) {
    return invalid("rendezvous", "node 0's store at " + where,
                   "it to come back within --rdzv-timeout " + limit +
                       " (node 0's launcher was lost and nothing serves its address again: " +
                       control.error().message() +
                       "; a job on node 0's store cannot go on without it: --rdzv-backend etcd "
                       "keeps an elastic job through any node's loss)");
  }
  (*control)->set_reply_timeout(std::max(kShortestReplyTimeout, options_.node_timeout));
  control_ = std::move(*control);
  // The first survivor back says where the job was; the others read it.
  const nlohmann::json mine = {{"round", round},
                               {"restarts_used", agreement_.restarts_used + 1},
                               {"run_id", options_.self.run_id}};
  auto said = control_->compare_set(kResumeKey, "", mine.dump());
  if (!said) return said.error();
  auto first = nlohmann::json::parse(*said, nullptr, false);
  return first.is_object() ? first.value("round", round) : round;
}

std::optional<int> NodeGroup::resumed_round() {
  if (!host_ || round_ >= 0 || resumed_) return std::nullopt;  // only a node 0 just started
  auto said = control_->get(kResumeKey, milliseconds(0));
  if (!said || !*said) return std::nullopt;
  auto resume = nlohmann::json::parse(**said, nullptr, false);
  if (!resume.is_object()) return std::nullopt;
  resumed_ = true;
  resume_round_ = resume.value("round", 0);
  resume_restarts_ = resume.value("restarts_used", 0);
  if (options_.say) {
    options_.say("aml-launch: node 0 came back: the survivors resume round " +
                 std::to_string(resume_round_) + " with " + std::to_string(resume_restarts_) +
                 " restart(s) used and their node ranks; the rounds before it are in their "
                 "--summary-file, not this node's\n");
  }
  return resume_round_;
}

}  // namespace aml
