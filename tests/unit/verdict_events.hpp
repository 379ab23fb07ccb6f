// What the verdict's tests feed it and hear from it (job_verdict_test.cpp,
// notice_verdict_test.cpp): a recorder of its effects and the workers' ends.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "notice/notice.hpp"
#include "supervisor/job_verdict.hpp"

namespace aml::verdict_events {

// What the verdict asked for, and the answers the other members give.
class Recorder : public JobEffects {
 public:
  void signal_workers(int sig) override { signals.push_back(sig); }
  std::optional<JobFailure> report_to_peers(const JobFailure& failure) override {
    reports.push_back(failure);
    if (first_in_job.empty()) return std::nullopt;
    auto first = first_in_job.front();
    first_in_job.pop_front();
    return first;
  }
  std::vector<int> signals;
  std::vector<JobFailure> reports;
  std::deque<JobFailure> first_in_job;  // the store's answer to each report
};

inline int exited(int code) { return code << 8; }  // a wait status
inline int killed_by(int sig) { return sig; }

inline WorkerExit exit_of(int rank, int status) {
  WorkerExit e;
  e.rank = rank;
  e.local_rank = rank;
  e.pid = 100 + rank;
  e.wait_status = status;
  return e;
}

// A worker's failure on another node, as its report says it.
inline JobFailure failure_on_node(int node, int rank, int code) {
  JobFailure f;
  f.node_rank = node;
  f.member = node;
  f.rank = rank;
  f.pid = 4242;
  f.exit_code = code;
  return f;
}

// A node's launcher lost (dead or silent), as the member that heard it reports it.
inline JobFailure lost_launcher(int node, const std::string& why) {
  JobFailure f;
  f.node_rank = node;
  f.member = node;
  f.exit_code = 1;
  f.status = std::string(JobFailure::kLauncherLost) + ": " + why;
  return f;
}

inline Notice preempt() {
  Notice n;
  n.kind = NoticeKind::preempt;
  n.source = "azure-scheduled-events";
  n.event_id = "E1";
  return n;
}

}  // namespace aml::verdict_events
