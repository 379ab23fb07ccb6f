// The streams' member (DESIGN §5): a watch streams from one member, and a member that stops
// serving — paused, hung, cut off from the launcher, or without a leader (a minority's member
// cannot tell the majority's news) — says nothing more on it, and nothing says so: the round's
// abort, a will, a seat would never come. etcd's own clients watch through gRPC keepalives and
// a leader requirement; the JSON gateway's watches have neither (nor a progress request: the
// gateway reads a watch's requests only from a body sent whole). So a thread of the session
// asks the streams' member a linearizable read every third of the lease
// (stream_member_check.hpp); where it does not answer within a member's try, the streams move to
// the next member that does, each from the first revision it has not seen (whoever reads a
// stream opened at an older epoch opens it again).
#include "etcd/etcd_session.hpp"

namespace aml::etcd {

void EtcdSession::check_stream_member() {
  if (!stream_check_) return;  // one member: nowhere to move
  if (const auto to = stream_check_->moved_to()) streams_moved_to(*to);
}

void EtcdSession::streams_moved_to(std::size_t member) {
  stream_member_ = member;
  ++stream_epoch_;
  if (stream_check_) stream_check_->ask(member);
}

}  // namespace aml::etcd
