// The round's part in notices of the job's end (issue 55): the desk's descriptor in the loop,
// the notice signal, and each new notice told to the workers, the verdict and the other nodes.
#include <sys/epoll.h>

#include "events/event_log.hpp"
#include "notice/notice_desk.hpp"
#include "supervisor/exit_status.hpp"
#include "supervisor/round.hpp"

namespace aml {

void Round::listen_for_notices() {
  NoticeDesk* desk = options_.notices;
  if (desk == nullptr || desk->fd() < 0) return;
  reactor_.add(desk->fd(), EPOLLIN, [desk](std::uint32_t) { desk->on_ready(Clock::now()); });
}

void Round::pass_on(int sig) {
  if (options_.notices && sig == options_.notices->settings().launcher_signal) {
    options_.notices->signal_came(sig);
    return;
  }
  workers_.signal_all(sig);
}

void Round::hear_notices(Clock::time_point now) {
  NoticeDesk* desk = options_.notices;
  if (desk == nullptr) return;
  desk->tick(now);
  for (const auto& [notice, here] : desk->take_new()) {
    // A freeze is not the workers' business (notice_desk.cpp).
    const int sig = notice.ends_the_job() ? desk->settings().to_workers : 0;
    if (sig != 0 && !verdict_.tearing_down()) workers_.signal_all(sig);
    const auto system_now = Notice::SystemClock::now();
    std::string line = "aml-launch: notice: " + describe(notice, system_now);
    if (notice.ends_the_job()) {
      line += ": every worker was told (" + (sig != 0 ? signal_name(sig) + ", " : std::string()) +
              "AML_LAUNCH_NOTICE_FILE); workers that now exit 0 end the job as preempted (exit " +
              std::to_string(kPreemptedExitCode) + ")";
      std::optional<Clock::time_point> stop_at;
      if (notice.deadline) {
        // Those still running at the deadline less the grace are stopped then, with the grace.
        const auto left =
            std::chrono::duration_cast<Clock::duration>(*notice.deadline - system_now);
        const auto grace = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(options_.term_timeout_seconds));
        stop_at = now + std::max(Clock::duration::zero(), left - grace);
        line += "; any still running in " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::seconds>(*stop_at - now).count()) +
                " s get SIGTERM (the deadline less --term-timeout)";
      }
      verdict_.notice_heard(notice, stop_at, sig);
    } else {
      line += ": the job rides it out";
    }
    consoles_.err.write(line + "\n");
    if (options_.events) {
      auto details = nlohmann::ordered_json::parse(notice_json(notice).dump());
      details["heard_here"] = here;
      options_.events->write("notice", std::move(details));
    }
    // Every node hears it: the others' workers are told of an end, and a pause is waited for.
    if (here && listening()) options_.peers->report_notice(notice);
  }
}

}  // namespace aml
