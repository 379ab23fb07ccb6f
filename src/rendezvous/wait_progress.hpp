// When a launcher waiting for its rendezvous says so (issue 63): a wait that is not forming
// must not be silent for --rdzv-timeout. The first line within 10 s of beginning to wait, then
// one every 30 s, each a single line of what it waits for and why; nothing once the round runs.
// The waits are cut into slices that end when the next line is due.
#pragma once

#include <algorithm>
#include <aml/error.hpp>
#include <chrono>
#include <functional>
#include <string>

namespace aml {

class WaitProgress {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirst{10000};
  static constexpr std::chrono::milliseconds kEvery{30000};

  // A wait begins: its first line is due kFirst from now (a wait begun already keeps its clock).
  void begin(Clock::time_point now) {
    if (waiting_) return;
    waiting_ = true;
    next_ = now + kFirst;
  }
  // The round runs, or the launcher stopped waiting for it (a hot spare, benched).
  void end() { waiting_ = false; }
  bool waiting() const { return waiting_; }
  bool due(Clock::time_point now) const { return waiting_ && now >= next_; }
  void said(Clock::time_point now) { next_ = now + kEvery; }
  // How long a wait may block before the next line is due: at most `left`, at least 1 ms.
  std::chrono::milliseconds slice(std::chrono::milliseconds left, Clock::time_point now) const {
    if (!waiting_) return left;
    const auto to_next = std::chrono::duration_cast<std::chrono::milliseconds>(next_ - now);
    return std::max(std::chrono::milliseconds(1), std::min(left, to_next));
  }

 private:
  bool waiting_ = false;
  Clock::time_point next_{};
};

// "Connection refused" from an error's "... (Connection refused)": the reason a dial gave.
inline std::string last_reason(const std::string& message) {
  const auto close = message.rfind(')');
  const auto open = close == std::string::npos ? std::string::npos : message.rfind('(', close);
  if (open == std::string::npos) return message;
  return message.substr(open + 1, close - open - 1);
}

// `attempt` (a dial) given at most `total`, cut into slices that end when a line is due: after
// a slice that failed, `say(reason, left)` where one is. An attempt that fails well before its
// slice ran out got the rendezvous's own answer (a refused secret, a name that does not
// resolve): that stands, as does the last slice's.
template <class T>
Result<T> attempt_saying(
    WaitProgress& progress, std::chrono::milliseconds total,
    const std::function<Result<T>(std::chrono::milliseconds)>& attempt,
    const std::function<void(const std::string&, std::chrono::milliseconds)>& say) {
  using Clock = WaitProgress::Clock;
  using std::chrono::milliseconds;
  constexpr milliseconds kEarly{250};
  const auto deadline = Clock::now() + total;
  progress.begin(Clock::now());
  for (;;) {
    const auto now = Clock::now();
    const auto left =
        std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - now));
    const milliseconds slice = progress.slice(left, now);
    Result<T> got = attempt(slice);
    if (got.ok() || slice >= left) return got;
    const auto after = Clock::now();
    if (after + kEarly < now + slice) return got;
    if (progress.due(after)) {
      progress.said(after);
      say(last_reason(got.error().message()),
          std::chrono::duration_cast<milliseconds>(deadline - after));
    }
  }
}

}  // namespace aml
