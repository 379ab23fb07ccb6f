// --hang-timeout across nodes (DESIGN §6): the nodes' quiet keys, their looks, their ranks'
// places, and the one verdict of each inquiry. An inquiry is numbered by the call-offs before
// it; its verdict key is set once, by whichever node first commits ("hung") or calls it off
// ("moved"): no node aborts ranks of an inquiry another called off, and none calls off one
// another has committed (its ranks then die of the hang, and what they print is no progress).
#include <nlohmann/json.hpp>

#include "rendezvous/node_group.hpp"

namespace aml {

// Each node says whether its ranks are quiet (a key while they are); any node, quiet itself,
// declares the job hung once every node's key is there (DESIGN §6: whichever node sees the
// whole job quiet).
bool NodeGroup::job_quiet(bool this_node_quiet) {
  const int me = options_.self.node_rank;
  if (this_node_quiet != quiet_said_) {
    auto said = this_node_quiet ? control_->set(node_key("quiet", me), "1")
                                : control_->erase(node_key("quiet", me));
    if (said) quiet_said_ = this_node_quiet;
  }
  return this_node_quiet && job_still_quiet();
}

bool NodeGroup::job_still_quiet() {
  auto all = all_exist("quiet");
  return all && *all;
}

void NodeGroup::inquiry_begun() {
  auto called_off = control_->add(key("hang/called_off"), 0);
  inquiry_ = called_off ? std::to_string(*called_off) : "?";
  hang_declared_ = false;
}

void NodeGroup::looked() {
  (void)control_->set(node_key("looked/" + inquiry_, options_.self.node_rank), "1");
}

bool NodeGroup::everyone_looked() {
  auto all = all_exist("looked/" + inquiry_);
  return all && *all;
}

void NodeGroup::frozen() {
  (void)control_->set(node_key("frozen/" + inquiry_, options_.self.node_rank), "1");
}

bool NodeGroup::everyone_frozen() {
  auto all = all_exist("frozen/" + inquiry_);
  return all && *all;
}

bool NodeGroup::commit_hang() {
  auto now = control_->compare_set(key("hang/verdict/" + inquiry_), "", "hung");
  hang_declared_ = now && *now == "hung";
  return hang_declared_;
}

bool NodeGroup::call_off_hang() {
  if (hang_declared_) return false;
  const std::string mine = "moved " + std::to_string(options_.self.node_rank);
  auto now = control_->compare_set(key("hang/verdict/" + inquiry_), "", mine);
  if (now && *now == "hung") {
    hang_declared_ = true;
    return false;
  }
  if (now && *now == mine) (void)control_->add(key("hang/called_off"), 1);  // the next inquiry
  job_quiet(false);
  return true;
}

bool NodeGroup::hang_declared() {
  if (!hang_declared_ && !inquiry_.empty()) {
    auto now = control_->get(key("hang/verdict/" + inquiry_), std::chrono::milliseconds(0));
    hang_declared_ = now && *now && **now == "hung";
  }
  return hang_declared_;
}

void NodeGroup::offer_places(const std::vector<RankPlace>& mine) {
  nlohmann::json out = nlohmann::json::array();
  for (const RankPlace& p : mine) {
    out.push_back({{"rank", p.rank},
                   {"node_rank", p.node_rank},
                   {"place", p.place},
                   {"detail", p.detail},
                   {"collectives", collectives_json(p.collectives)}});
  }
  (void)control_->set(node_key("places/" + inquiry_, options_.self.node_rank), out.dump());
}

std::optional<std::vector<RankPlace>> NodeGroup::pooled_places(bool last_chance) {
  if (!last_chance) {
    auto all = all_exist("places/" + inquiry_);
    if (!all || !*all) return std::nullopt;
  }
  std::vector<RankPlace> all;
  for (const auto& keys : key_batches("places/" + inquiry_)) {
    auto values = control_->get_all(keys, std::chrono::milliseconds(0));
    if (!values) continue;
    for (const auto& value : *values) {
      if (!value) continue;
      auto parsed = nlohmann::json::parse(*value, nullptr, false);
      if (!parsed.is_array()) continue;
      for (const auto& p : parsed) {
        all.push_back({p.value("rank", -1), p.value("node_rank", 0), p.value("place", ""),
                       p.value("detail", ""),
                       collectives_from_json(p.value("collectives", nlohmann::json()))});
      }
    }
  }
  return all;
}

}  // namespace aml
