// What the store says about the connections it refuses (DESIGN §5): each peer address and
// reason once, and no more than a few lines a minute whatever arrives (a port scanner or
// a flood must not fill the job's log); what was not said is counted and summed up later.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <unordered_set>

namespace aml::store {

class RefusalLog {
 public:
  using Clock = std::chrono::steady_clock;
  using Sink = std::function<void(const std::string&)>;
  static constexpr std::size_t kLinesPerWindow = 10;
  static constexpr std::chrono::seconds kWindow{60};
  static constexpr std::size_t kAddressesKept = 10000;

  explicit RefusalLog(Sink sink) : sink_(std::move(sink)) {}
  // A connection from `address` was refused for `why`.
  void refused(const std::string& address, const std::string& why, Clock::time_point now);
  // Says what was counted and not said once the window is over; call now and then.
  void flush(Clock::time_point now);
  std::size_t refusals() const { return total_; }

 private:
  Sink sink_;
  std::unordered_set<std::string> said_;  // "address reason" already said
  Clock::time_point window_start_{};
  std::size_t lines_in_window_ = 0;
  std::size_t unsaid_ = 0;                       // refusals not said in this window
  std::unordered_set<std::string> unsaid_from_;  // their addresses (bounded)
  std::size_t total_ = 0;
};

}  // namespace aml::store
