// What a scrape of --metrics-port answers (DESIGN §6b; docs/guides/observability.md lists every
// metric): the job's state as this launcher follows it through its events, its workers' and
// its own CPU and memory read from /proc at the scrape, and the goodput clock's figures. The
// supervisor writes (an event), the metrics server's thread reads (a scrape): one lock.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "events/event_observer.hpp"
#include "events/goodput_clock.hpp"

namespace aml {

struct MetricsIdentity {
  std::string host;
  std::string run_id;
  std::string version;
  int max_restarts = 0;
};

class MetricsBoard : public EventObserver {
 public:
  explicit MetricsBoard(MetricsIdentity identity);

  void on_event(const Event& event) override;
  // The exposition text, as of now.
  std::string render();

 private:
  struct Worker {
    int rank = -1;
    int local_rank = 0;
  };

  std::mutex mutex_;
  const MetricsIdentity identity_;
  GoodputClock clock_;
  int node_rank_ = 0;
  int round_ = 0;
  int restarts_used_ = 0;
  int max_restarts_ = 0;
  int nodes_ = 0;
  int benched_ = 0;
  int spares_ = 0;
  std::map<pid_t, Worker> running_;
  std::map<std::string, double> exits_;  // by status: "0", "1", "SIGKILL"
  double failures_ = 0;
  double nodes_lost_ = 0;
  double nodes_returned_ = 0;
  double stops_ = 0;
  double notices_ = 0;
  double hang_inquiries_ = 0;
  double hang_verdicts_ = 0;
  std::vector<double> rendezvous_waits_;
  std::map<std::pair<int, int>, double> lateness_;  // by rank and node: the last sample's
};

}  // namespace aml
