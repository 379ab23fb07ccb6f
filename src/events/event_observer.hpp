// What else follows the job's events beside their file (events/event_log.hpp): the goodput
// clock (how the job's time was spent) and the metrics board (what a scrape answers). One
// stream, so that the file, the summary's time and the metrics never tell different stories.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string_view>

namespace aml {

struct Event {
  std::string_view kind;
  const nlohmann::ordered_json& details;
  int rank;       // -1: no rank
  int round;      // the round it belongs to
  int node_rank;  // this launcher's (an elastic job's: in the round)
  std::chrono::steady_clock::time_point at;
};

class EventObserver {
 public:
  virtual ~EventObserver() = default;
  // Called on the supervisor's thread, as the event happens; must not block.
  virtual void on_event(const Event& event) = 0;
};

}  // namespace aml
