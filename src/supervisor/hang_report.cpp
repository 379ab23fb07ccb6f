#include "supervisor/hang_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "supervisor/failure_summary.hpp"
#include "supervisor/rank_log.hpp"
#include "supervisor/stack_collection.hpp"
#include "util/make_directories.hpp"
#include "util/replace_file.hpp"

namespace aml {
namespace {

std::string seconds_to_hundredths(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f s", s);
  return text;
}

}  // namespace

std::string place_of(const RankLook& look) {
  std::string place;
  if (look.python_from == "py-spy") place = place_from_py_spy(look.python_stacks);
  if (place.empty() && look.python_from == "faulthandler") {
    place = place_from_faulthandler(look.python_stacks);
  }
  if (place.empty() && !look.proc.python()) place = place_from_gdb(look.native_stacks);
  if (place.empty() && !look.proc.wchan.empty()) place = "the kernel's " + look.proc.wchan;
  return place;
}

RankPlace RankLook::digest() const {
  return RankPlace{rank, node_rank, place,
                   proc.describe() + ", " + seconds_to_hundredths(cpu_seconds) +
                       " CPU in the last " + seconds_to_hundredths(interval_seconds),
                   collectives};
}

void HangReport::decide() {
  verdict = hang_verdict(places);
  std::vector<RankCollectiveDigest> digests;
  for (const RankPlace& p : places) digests.push_back({p.rank, p.node_rank, &p.collectives});
  collective = collective_verdict(std::move(digests));
  if (collective.line.empty()) return;
  verdict += "; flight recorder: " + collective.line;
  // Where the two name different ranks, both stand, and that is said.
  const std::vector<int> by_stacks = odd_ranks(places);
  if (!collective.named.empty() && !by_stacks.empty() && by_stacks != collective.named) {
    verdict += " (the stacks and the flight recorder name different ranks)";
  }
}

std::string RankLook::line() const {
  std::string text = "rank " + std::to_string(rank) + " (node " + std::to_string(node_rank) +
                     ", pid " + std::to_string(pid) + "): " + (place.empty() ? "no stack" : place) +
                     "; " + digest().detail;
  if (step >= 0) text += "; last step " + std::to_string(step);
  return text;
}

std::string RankLook::full_text() const {
  std::string text = "aml-launch: hang report for " + line() + "\n";
  if (!proc.kernel_stack.empty()) text += "--- kernel stack (/proc)\n" + proc.kernel_stack;
  if (!python_stacks.empty()) {
    text += "--- Python stacks (" + python_from + ")\n" + python_stacks;
    if (text.back() != '\n') text += '\n';
  }
  if (!native_stacks.empty()) {
    text += "--- native stacks (gdb)\n" + native_stacks;
    if (text.back() != '\n') text += '\n';
  }
  return text;
}

std::string HangReport::text() const {
  std::string text =
      "aml-launch: the job hung: no rank showed progress (output, or "
      "aml_launch.progress()) for " +
      seconds_to_hundredths(timeout_seconds) + " (--hang-timeout)\n";
  text += "aml-launch: " + verdict + "\n";
  for (const RankLook& look : ranks) text += "aml-launch:   " + look.line() + "\n";
  if (!stacks_at.empty()) text += "aml-launch: every rank's stacks: " + stacks_at + "\n";
  return text;
}

JobFailure hang_failure(const HangReport& report) {
  JobFailure hung;
  hung.exit_code = kHangExitCode;
  hung.status = "the job hung: " + report.verdict;
  hung.time = utc_timestamp(std::chrono::system_clock::now());
  return hung;
}

void keep_full_stacks(HangReport& report, const std::function<RankLog*(int rank)>& log_of,
                      const std::string& dir) {
  for (const RankLook& look : report.ranks) {
    if (RankLog* log = log_of(look.rank)) {
      log->append(look.full_text());
      report.stacks_at = "at the end of each rank's log file";
      continue;
    }
    if (dir.empty()) continue;
    make_directories(dir);
    const std::string prefix = dir + "/hang_stacks_rank_";
    if (replace_file(prefix + std::to_string(look.rank) + ".txt", look.full_text())) {
      report.stacks_at = prefix + "<rank>.txt";
    }
  }
}

std::string HangReport::json_text() const {
  nlohmann::ordered_json j;
  j["timeout_seconds"] = timeout_seconds;
  j["verdict"] = verdict;
  j["collective"] = collective.json.is_null() ? nlohmann::ordered_json(nullptr) : collective.json;
  auto& all = j["ranks"] = nlohmann::ordered_json::array();
  for (const RankPlace& p : places) {
    all.push_back(
        {{"rank", p.rank}, {"node_rank", p.node_rank}, {"place", p.place}, {"detail", p.detail}});
  }
  auto& here = j["this_node"] = nlohmann::ordered_json::array();
  for (const RankLook& look : ranks) {
    here.push_back({{"rank", look.rank},
                    {"local_rank", look.local_rank},
                    {"pid", look.pid},
                    {"place", look.place},
                    {"state", std::string(1, look.proc.state)},
                    {"wchan", look.proc.wchan},
                    {"threads", look.proc.threads},
                    {"cpu_seconds_last_interval", look.cpu_seconds},
                    {"step", look.step >= 0 ? nlohmann::ordered_json(look.step) : nullptr},
                    {"python_stacks_from", look.python_from}});
  }
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace aml
