// A round's end that etcd did not take (DESIGN §5). Under etcd the round's first verdict is its
// abort key, and the next round is claimed only once that key is there. A launcher that ends
// its round while etcd is out of its reach (its own failure reported, a loss heard on the
// tripwire, etcd itself silent past --node-timeout) cannot write it then; where every member
// was in that state (etcd without a quorum for longer than --node-timeout), nobody wrote it,
// no lease ended (etcd ends none without a leader), and the launchers back from the outage
// waited for a seat until --rdzv-timeout. Each keeps the end it could not write and writes it
// at its next join, before it looks for a seat: the first written is the round's verdict, as
// ever (a compare-and-set: one already there stays).
#include "rendezvous/node_group.hpp"

namespace aml {

// The verdict the rendezvous holds once this one is written (this one, or the first before it).
Result<std::string> NodeGroup::write_round_end(const std::string& verdict) {
  // Node 0's members hear it first on their tripwire, whatever etcd does: where etcd is out of
  // reach, its write waits out --node-timeout, and meanwhile its store's closing would tell
  // them node 0 died, or their own wait would end the round for the rendezvous lost. Each
  // writes what it heard, the same verdict (first come, first named).
  if (options_.self.node_rank == 0) tell_members(verdict);
  auto stored = control_->compare_set(key("abort"), "", verdict);
  if (!stored) keep_unwritten_end(verdict);
  return stored;
}

void NodeGroup::keep_unwritten_end(const std::string& verdict) {
  if (!on_etcd() || round_ < 0) return;
  if (!unwritten_end_) unwritten_end_ = {key("abort"), verdict};  // the first one it knew
}

Result<bool> NodeGroup::write_unwritten_end() {
  if (!unwritten_end_) return true;
  auto stored = control_->compare_set(unwritten_end_->first, "", unwritten_end_->second);
  if (!stored) return stored.error();  // etcd still out of reach: the join comes back
  if (options_.say && *stored == unwritten_end_->second) {
    options_.say("aml-launch: " + options_.self.host + ": the end of round " +
                 std::to_string(round_) +
                 ", which etcd could not take as it came, is written now: the next round can "
                 "begin\n");
  }
  unwritten_end_.reset();
  return true;
}

}  // namespace aml
