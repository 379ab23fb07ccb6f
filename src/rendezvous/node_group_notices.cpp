// Notices cross the nodes (issue 55). The node that hears one writes it under the round's next
// notice number (notice/0, notice/1, ...: a count gives each its number), and every node (that
// one too) hears each in turn on a connection blocked on the next number's key. A connection of
// its own: the abort's watch is also this node's sign of life to node 0 and asks again every
// few seconds; this one waits long and costs node 0 nothing while nobody speaks. Opened only
// where notices can come (GroupOptions::watch_notices).
//
// A Freeze is heard this way too: the node that will pause may then stay silent for
// --node-timeout plus the pause before anyone counts it lost (node 0 of a follower, a follower
// of node 0, node 0 of itself). Under etcd a lease does not wait: its TTL is --node-timeout.
#include <sys/epoll.h>

#include <nlohmann/json.hpp>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"

namespace aml {
namespace {

// The notice watch's wait, asked again after it; a notice ends it at once.
constexpr std::chrono::minutes kNoticeWait{10};
// A freeze whose length the platform did not say is taken for this long.
constexpr std::chrono::seconds kUnsaidFreeze{30};
// A freeze may begin after the time the platform gave (Azure's NotBefore: not before then):
// its allowance holds this long after it.
constexpr std::chrono::minutes kFreezeMayStartLate{15};

}  // namespace

std::string NodeGroup::notice_key(int number) const {
  return key("notice/" + std::to_string(number));
}

void NodeGroup::watch_notices() {
  notice_watch_.reset();
  next_notice_ = 0;
  freezes_.clear();
  if (!options_.watch_notices) return;
  auto watch = dial_(std::max(group_timing::kShortestReplyTimeout, options_.node_timeout));
  // Without it this node still hears its own notices; the job goes on.
  if (!watch || !(*watch)->start_get(notice_key(0), kNoticeWait)) return;
  notice_watch_ = std::move(*watch);
}

void NodeGroup::report_notice(const Notice& notice) {
  if (notice.ends_the_job()) notice_heard_ = true;
  auto number = control_->add(key("notices"), 1);
  if (number)
    (void)control_->set(notice_key(static_cast<int>(*number - 1)), notice_json(notice).dump());
}

std::optional<Notice> NodeGroup::hear_notice() {
  auto heard = notice_watch_->finish_get();
  if (heard && *heard) ++next_notice_;
  if (heard && notice_watch_->start_get(notice_key(next_notice_), kNoticeWait)) {
    if (!*heard) return std::nullopt;  // the long wait ended with nothing: wait again
  } else {
    // The connection is lost: the abort's watch tells what that means.
    if (events_) epoll_ctl(events_.get(), EPOLL_CTL_DEL, notice_watch_->fd(), nullptr);
    notice_watch_.reset();
    if (!heard || !*heard) return std::nullopt;
  }
  auto parsed = nlohmann::json::parse(**heard, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  auto notice = notice_from_json(parsed);
  if (!notice) return std::nullopt;
  if (notice->kind == NoticeKind::freeze) allow_freeze(*notice);
  return *notice;
}

void NodeGroup::allow_freeze(const Notice& freeze) {
  const auto now = Clock::now();
  const auto length = freeze.duration_seconds > 0
                          ? Clock::duration(std::chrono::seconds(freeze.duration_seconds))
                          : Clock::duration(kUnsaidFreeze);
  // From the platform's time on this machine's steady clock (the nodes' clocks may differ by
  // up to --node-timeout, the allowance's own start).
  const auto starts = freeze.deadline ? now + std::chrono::duration_cast<Clock::duration>(
                                                  *freeze.deadline - Notice::SystemClock::now())
                                      : now;
  freezes_[freeze.node_rank] = {starts - options_.node_timeout,
                                starts + length + kFreezeMayStartLate, length};
}

NodeGroup::Clock::duration NodeGroup::freeze_allowance(int member, Clock::time_point now) const {
  if (freezes_.empty()) return {};
  const auto& nodes = agreement_.nodes;
  const int node = member == options_.self.node_rank ? options_.self.node()
                   : member >= 0 && member < static_cast<int>(nodes.size())
                       ? nodes[static_cast<std::size_t>(member)].node()
                       : member;
  auto freeze = freezes_.find(node);
  if (freeze == freezes_.end() || now < freeze->second.from || now > freeze->second.until) {
    return {};
  }
  return freeze->second.length;
}

}  // namespace aml
