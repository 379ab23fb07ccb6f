// What the verdict's tests feed it and hear from it (job_verdict_test.cpp,
// notice_verdict_test.cpp): a recorder of its effects and the workers' ends.
#pragma once

#include <deque>
#include <optional>
#include <vector>

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

}  // namespace aml::verdict_events
