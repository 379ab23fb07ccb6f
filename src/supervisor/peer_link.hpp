// The supervisor's view of the other nodes of a multi-node job (DESIGN §5): it hears when the
// job must stop because of them, and tells them when this node fails first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "notice/notice.hpp"
#include "supervisor/hang_verdict.hpp"
#include "supervisor/job_failure.hpp"

namespace aml {

struct PeerNews {
  std::optional<JobFailure> failure;  // the job must stop because of another node
  bool complete = false;              // every node's workers finished well: the job is done
  // The job's notice of its end (issue 55), heard by whichever node first: every node tells
  // its workers. Comes beside the rest, at most once a round.
  std::optional<Notice> notice;
};

class PeerLink {
 public:
  virtual ~PeerLink() = default;
  // Watched for readability in the supervisor's loop; -1 for none.
  virtual int fd() const = 0;
  // Milliseconds until poll() wants to run again even without input (heartbeats); -1: never.
  virtual int next_poll_ms() const = 0;
  // What the other nodes have to say; `readable`: fd() was ready.
  virtual PeerNews poll(bool readable) = 0;
  // This node's own failure: the other nodes stop too (the first one reported in the job
  // is the one everybody names). The link fills in node_rank and host. Gives that first one,
  // which may be another node's that came a moment before (nullopt: not known).
  virtual std::optional<JobFailure> report(const JobFailure& failure) = 0;
  // Every worker of this node exited 0: the round is over for the job once every node says
  // so (poll() then says complete), and the job fails if another node fails meanwhile.
  virtual void local_success() = 0;
  // A notice of the job's end that this node heard (its platform's, or --notice-signal): every
  // node hears it through poll() (this one too); where another node's came first, that one.
  virtual void report_notice(const Notice& notice) = 0;
  // This launcher's index in the job's group (its node rank; in a per-process launch, its
  // rank): a report heard back from the store may be its own.
  virtual int member() const = 0;

  // --hang-timeout across nodes (DESIGN §6): whether this node's ranks showed no progress for
  // the timeout (a node whose workers all finished says so too); true once every node's
  // are quiet: the job is hung, and every node looks at its ranks.
  virtual bool job_quiet(bool this_node_quiet) = 0;
  // Every node says when it has looked at its ranks without harming them: only then may
  // they be given SIGABRT for their faulthandler stacks (one node's ranks dying early would
  // change what the others' show). These never wait: the inquiry asks again at its next turn.
  virtual void looked() = 0;
  // Every node still quiet: a node whose ranks moved called its inquiry off, and so must all.
  virtual bool job_still_quiet() = 0;
  virtual bool everyone_looked() = 0;
  // One verdict per inquiry, whichever node says it first. This node begins one (after
  // job_quiet gave true); commits it before its ranks get SIGABRT: false where another node
  // called it off first; calls it off: false where another node committed it first (then
  // this node commits too: its ranks die of the hang); and whether any node committed it.
  virtual void inquiry_begun() = 0;
  virtual bool commit_hang() = 0;
  virtual bool call_off_hang() = 0;
  virtual bool hang_declared() = 0;
  // This node's Python ranks are stopped (SIGSTOP) for the aborts; and every node's are.
  virtual void frozen() = 0;
  virtual bool everyone_frozen() = 0;
  // This node's ranks' places in; every node's out once all have given theirs (or, at
  // `last_chance`, those that came), the same on every node: the verdict's input.
  virtual void offer_places(const std::vector<RankPlace>& mine) = 0;
  virtual std::optional<std::vector<RankPlace>> pooled_places(bool last_chance) = 0;

  // --straggler-check across nodes (straggler_check.hpp). The job's clock (node 0's store's
  // host's) less this node's, measured over the store link; nullopt where the rendezvous has
  // no clock to give (etcd: the nodes' clocks are taken as they are).
  virtual std::optional<std::int64_t> clock_offset_ns() { return std::nullopt; }
  // This node's ranks' calls for a sample in; every node's out at the deciding node (member 0)
  // once all have given theirs (or, at `last_chance`, those that came).
  virtual void offer_calls(std::int64_t sample, const std::string& calls) {
    (void)sample;
    (void)calls;
  }
  virtual std::optional<std::vector<std::string>> pooled_calls(std::int64_t sample,
                                                               bool last_chance) {
    (void)sample;
    (void)last_chance;
    return std::vector<std::string>{};
  }
  // --bench-stragglers: a straggler's node is benched at the next round where a spare or MIN
  // allows; false where the job is not elastic (no bench).
  virtual bool bench_straggler(int node_rank, const std::string& why) {
    (void)node_rank;
    (void)why;
    return false;
  }
};

}  // namespace aml
