#include "notice/notice_desk.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "supervisor/exit_status.hpp"
#include "util/replace_file.hpp"

namespace aml {

NoticeDesk::NoticeDesk(NoticeSettings settings, std::function<void(const std::string&)> say)
    : settings_(std::move(settings)), say_(std::move(say)) {
  if (settings_.metadata && !settings_.metadata->platforms.empty()) {
    watch_ = std::make_unique<MetadataWatch>(
        *settings_.metadata, [this](Notice notice) { hear(std::move(notice), true); },
        [this](const std::string& line) { say_("warning: notices: " + line); });
  }
}

void NoticeDesk::on_ready(Clock::time_point now) {
  if (watch_) watch_->on_ready(now);
}

void NoticeDesk::tick(Clock::time_point now) {
  if (watch_) watch_->tick(now);
}

std::optional<NoticeDesk::Clock::time_point> NoticeDesk::next_deadline() const {
  return watch_ ? watch_->next_deadline() : std::nullopt;
}

void NoticeDesk::signal_came(int sig) {
  Notice notice;
  notice.kind = NoticeKind::signal;
  notice.source = "signal";
  notice.event_id = signal_name(sig) + "@" + iso8601_utc(Notice::SystemClock::now());
  notice.detail = signal_name(sig) + " to the launcher (--notice-signal)";
  hear(std::move(notice), true);
}

void NoticeDesk::heard_elsewhere(Notice notice) { hear(std::move(notice), false); }

void NoticeDesk::hear(Notice notice, bool here) {
  if (notice.node_rank < 0) {
    notice.node_rank = settings_.node_rank;
    notice.host = settings_.host;
  }
  const std::string key = notice.source + "\n" + notice.event_id + "\n" +
                          std::string(to_string(notice.kind)) + "\n" +
                          std::to_string(notice.node_rank);
  if (std::find(heard_keys_.begin(), heard_keys_.end(), key) != heard_keys_.end()) return;
  heard_keys_.push_back(key);
  // The file holds the first notice that ends the job. A freeze is the launchers' business
  // alone: a worker that saves and exits on the notice would end the job for a pause.
  if (notice.ends_the_job() && !ending_) {
    ending_ = notice;
    if (!settings_.file.empty()) write_file(*ending_);
  }
  new_.push_back({std::move(notice), here});
}

void NoticeDesk::write_file(const Notice& notice) {
  nlohmann::json document = notice_json(notice);
  document["seconds_left"] = nullptr;
  if (notice.deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(*notice.deadline -
                                                                       Notice::SystemClock::now());
    document["seconds_left"] = std::max<long long>(0, left.count());
  }
  if (!replace_file(settings_.file, document.dump(2) + "\n"))
    say_("warning: notices: could not write " + settings_.file + " (AML_LAUNCH_NOTICE_FILE)");
}

std::vector<NoticeDesk::Heard> NoticeDesk::take_new() { return std::exchange(new_, {}); }

}  // namespace aml
