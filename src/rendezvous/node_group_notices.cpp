// A notice of the job's end crosses the nodes (issue 55): the node that hears it sets the round's
// notice key, first come first kept, and every node (that one too) hears it on a connection
// blocked on that key. A connection of its own: the abort's watch is also this node's sign of
// life to node 0 and asks again every few seconds; this one waits long and costs node 0
// nothing while nobody speaks. Opened only where notices can come (GroupOptions::watch_notices).
#include <sys/epoll.h>

#include <nlohmann/json.hpp>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {
namespace {

// The notice watch's wait, asked again after it; a notice ends it at once.
constexpr std::chrono::minutes kNoticeWait{10};

}  // namespace

void NodeGroup::watch_notices() {
  notice_watch_.reset();
  if (!options_.watch_notices) return;
  auto watch = dial_(std::max(group_timing::kShortestReplyTimeout, options_.node_timeout));
  // Without it this node still hears its own notices; the job goes on.
  if (!watch || !(*watch)->start_get(key("notice"), kNoticeWait)) return;
  notice_watch_ = std::move(*watch);
}

void NodeGroup::report_notice(const Notice& notice) {
  (void)control_->compare_set(key("notice"), "", notice_json(notice).dump());
}

std::optional<Notice> NodeGroup::hear_notice() {
  auto heard = notice_watch_->finish_get();
  if (heard && !*heard && notice_watch_->start_get(key("notice"), kNoticeWait)) {
    return std::nullopt;  // the long wait ended with nothing: wait again
  }
  // One notice a round (or the connection lost: the abort's watch tells what that means).
  if (events_) epoll_ctl(events_.get(), EPOLL_CTL_DEL, notice_watch_->fd(), nullptr);
  notice_watch_.reset();
  if (!heard || !*heard) return std::nullopt;
  auto parsed = nlohmann::json::parse(**heard, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  auto notice = notice_from_json(parsed);
  if (!notice) return std::nullopt;
  return *notice;
}

}  // namespace aml
