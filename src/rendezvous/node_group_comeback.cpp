// A node 0 that comes back (DESIGN §5): with node 0's store, the store goes away with node 0's
// launcher. Where its address serves again (Kubernetes restarts worker-0's pod under the same
// name; a scale set replaces the VM under the same host name), the survivors keep their places:
// their workers stopped, they wait up to --rdzv-timeout, join the new node 0 and tell it the
// job's state (the round to resume, the restarts used; each its own node rank in its slot), and
// the next round runs. Nobody elects a standby: the survivors only wait for the one address.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;
using namespace elastic_keys;

bool NodeGroup::store_gone() {
  if (!options_.elastic || host_ || on_etcd()) return false;
  return !control_->check({std::string(kNextRoundKey)}).ok();
}

Result<int> NodeGroup::rejoin_store(int round) {
  const std::string where = options_.master_addr + ":" + std::to_string(options_.master_port);
  const std::string limit = seconds_text(options_.rdzv_timeout);
  if (options_.say) {
    options_.say("aml-launch: " + options_.self.host + ": node 0's store at " + where +
                 " went away; this node keeps its place" +
                 (options_.self.node_rank >= 0
                      ? " (node rank " + std::to_string(options_.self.node_rank) + ")"
                      : std::string()) +
                 " and waits up to --rdzv-timeout " + limit + " for it to come back\n");
  }
  watch_.reset();
  notice_watch_.reset();
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
  launcher_id_ = -1;  // numbers come from the new store
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
