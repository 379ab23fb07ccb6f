// The nodes of a multi-node job, as one node's launcher sees them (DESIGN §5). Every node joins
// each round of the rendezvous (node 0's store, or etcd: rendezvous_client.hpp), the group
// checks that all agree on the job, and then all spawn together. While the workers run, the group
// carries failures between nodes (the first one reported is the one every node names), heartbeats
// that reveal a lost launcher, and the news that every node has finished.
#pragma once

#include <aml/error.hpp>
#include <aml/store.hpp>
#include <aml/topology.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/bench.hpp"
#include "rendezvous/group_options.hpp"
#include "rendezvous/node_info.hpp"
#include "rendezvous/rendezvous_backend.hpp"
#include "rendezvous/rendezvous_client.hpp"
#include "rendezvous/wait_progress.hpp"
#include "store/core/store_host.hpp"
#include "store/launchers/job_auth.hpp"
#include "supervisor/peer_link.hpp"
#include "util/unique_fd.hpp"

namespace aml {

// Elastic: the job ended while this launcher waited for a round (a hot spare).
struct JobEnd {
  int exit_code = 0;
  std::string said;  // node 0's report of the end
  std::string told;  // its first failure and notice (RunOutcome::told_end), "" where not told
};

// What every node agreed on for one round.
struct Agreement {
  int round = 0;      // elastic: a launcher that came late joins a later round than it asked
  int node_rank = 0;  // this node's, in this round
  // Rounds that ended in a failure before this one: what --max-restarts counts (in an elastic
  // job node 0's count; a round ended to admit newcomers is not one).
  int restarts_used = 0;
  std::optional<JobEnd> ended;
  int worker_master_port = 0;    // picked by node 0: the workers' own MASTER_PORT
  int jax_coordinator_port = 0;  // picked by node 0 (--framework jax): process 0's coordinator
  int worker_store_port = 0;     // etcd: the workers' store, served by this round's node 0
  // Why the nodes but node 0 carry their workers' store calls through a relay of their own
  // (nullopt: every worker meets node 0's store directly).
  std::optional<std::string> relay;
  int node_count = 0;
  int spares = 0;       // elastic, on the node that gave the round's seats: launchers left waiting
  int generation = -1;  // etcd: the run of the job's id (RendezvousClient::generation)
  // By node rank: on node 0 every node; on the others only where they need them all (the
  // workers' TF_CONFIG), else node 0 alone. Every node sending every node the whole list made
  // the rendezvous grow with the square of the nodes (6.5 s of 8.2 s at 1,024 nodes).
  std::vector<NodeInfo> nodes;
  // Elastic: the nodes benched so far (the round's node 0 tells every member).
  std::vector<BenchedNode> bench;
  // Node 0: the nodes whose InfiniBand/RoCE ports are slower than the fastest node's, named
  // ("node 2 (c) at 10.0.0.3: 100 Gb/s"), "" where none is; a warning, not a failure.
  std::string slower_ports;
};

// A launcher of an elastic round, as the round's seats' record names it.
struct SeatedLauncher {
  std::string host;  // for people
  long pid = 0;
  std::string addr;  // as the others reach it: the workers' store admits its workers
  std::string
      machine;  // the scheduler's name for the machine (AZ_BATCH_NODE_ID, ...), for the bench
};

// How a launcher reaches its job's rendezvous, made by the launcher for the backend it chose
// (launcher/rendezvous_engine.cpp): a new connection on each call, and node 0's store where
// this launcher serves it.
struct RendezvousEngine {
  using Dialer =
      std::function<Result<std::unique_ptr<RendezvousClient>>(std::chrono::milliseconds)>;
  Dialer dial;
  std::unique_ptr<StoreHost> host;
};

class NodeGroup : public PeerLink {
 public:
  // Connects to the rendezvous through `engine` (waiting for node 0 to come up, within the
  // rendezvous timeout).
  static Result<std::unique_ptr<NodeGroup>> start(GroupOptions options, RendezvousEngine engine);
  static std::string member_name(const NodeInfo& self);  // who a launcher is, for a store's log
  // A launcher whose rendezvous does not answer yet says so (wait_progress.hpp): what it dials,
  // the last dial's reason, the time left.
  static void say_dialing(const GroupOptions& options, const std::string& reason,
                          std::chrono::milliseconds left);
  ~NodeGroup() override;

  // Meets every other node for this round (0, then 1 after a restart, ...) of a phase ("run",
  // or "preflight" before it). An error names the nodes that did not come or do not agree.
  Result<Agreement> join(int round, const std::string& phase = "run");

  // Elastic, on node 0: tells the launchers waiting for a round (hot spares) that the job
  // ended, with its exit status and report, and gives them a moment to read it.
  // told: the first failure and notice as the summary names them (one line of JSON).
  void end_of_job(int exit_code, const std::string& said, const std::string& told);

  // "10.0.0.1:29500": for workers that want to use the store themselves (node 0's; under
  // etcd, the one this round's node 0 serves them).
  std::string store_address() const;
  // This round's node 0 serves its workers a store of its own, and they meet at its address:
  // under etcd, and where node 0's store's host sits the round out (node_group_keeper.cpp).
  bool node0_serves_own_store() const { return on_etcd() || agreement_.worker_store_port != 0; }
  // This round's node 0's address: the workers' MASTER_ADDR.
  std::string node0_address() const;
  bool on_etcd() const { return options_.backend.kind == RendezvousBackend::Kind::etcd; }
  const std::string& token() const { return options_.token; }
  // What this job's workers prove themselves to the store with (never the job's secret).
  StoreCredentials worker_credentials() const {
    return options_.auth.worker_credentials(options_.token);
  }

  int fd() const override;
  int next_poll_ms() const override;
  PeerNews poll(bool readable) override;
  std::optional<JobFailure> report(const JobFailure& failure) override;
  void local_success() override;
  void report_notice(const Notice& notice) override;
  int member() const override { return options_.self.node_rank; }
  bool job_quiet(bool this_node_quiet) override;
  void inquiry_begun() override;
  void looked() override;
  bool job_still_quiet() override;
  bool everyone_looked() override;
  bool commit_hang() override;
  bool call_off_hang() override;
  bool hang_declared() override;
  void frozen() override;
  bool everyone_frozen() override;
  void offer_places(const std::vector<RankPlace>& mine) override;
  std::optional<std::vector<RankPlace>> pooled_places(bool last_chance) override;
  std::optional<std::int64_t> clock_offset_ns() override;  // node_group_stragglers.cpp
  void offer_calls(std::int64_t sample, const std::string& calls) override;
  std::optional<std::vector<std::string>> pooled_calls(std::int64_t sample,
                                                       bool last_chance) override;
  bool bench_straggler(int node_rank, const std::string& why) override;

 private:
  using Clock = std::chrono::steady_clock;
  using Dialer = RendezvousEngine::Dialer;
  NodeGroup(GroupOptions options, std::unique_ptr<StoreHost> host,
            std::unique_ptr<RendezvousClient> control, Dialer dial, WaitProgress progress);
  std::string key(const std::string& name) const;  // this round's key
  // The key of a round being joined (its phase is join's).
  std::string round_key(int round, const std::string& name) const;
  std::string round_name() const;    // "round 0 of run X", for errors
  std::string members_word() const;  // "node rank", or "rank" (per-process)
  std::string node_key(const std::string& name, int node) const;
  // Elastic: node 0 decides who is in `round` and under which node rank; the others wait for
  // their seat (a later round where they came too late or there was none). The round they
  // are in, or the end of the job.
  Result<std::vector<long>> gone_among(const std::vector<long>& ids);  // node_group_gone.cpp
  void end_round_lost_unheard(int round);
  std::string lease_ended_text() const;  // why a launcher whose etcd lease ended is lost
  Result<Agreement> join_round(int round, const std::string& phase);  // join's one try
  Result<Agreement> decide_members(int round);
  Result<Agreement> take_seat(int round);
  void watch_next_seat();  // etcd: opened while the round runs
  Result<std::unique_ptr<RendezvousClient>> dial_seat_watch(int round);
  // etcd: reads of the round's abort and verdict that a batch joins, so that the launcher's
  // seat watch follows them from its revision (none for node 0's store).
  std::vector<BatchOp> round_news(int round) const;
  Result<std::optional<Agreement>> ended_job(int round);  // the end, once it is written
  Result<long> launcher_number();
  // Under etcd: whether this launcher gives the seats of `round` (it claimed it first, and
  // the round before it has ended). Node 0's store's host always does.
  bool coordinates(int round, bool first_look);
  bool may_claim(bool first_look) const;  // etcd, and not one of the many at a round's end
  std::vector<BatchOp> claim_look(int round) const;  // its claim, the round before's end
  bool claims(int round, const std::vector<std::optional<std::string>>& seen);  // claim_look's
  Result<Agreement> complete_seating(int round, const std::string& record);
  Agreement seated_at(int round, int rank, int nodes, int restarts_used);
  // What the round before `round` left: its seats (launcher id -> node rank, and who), the
  // restarts used (a failed round counts one), and the launcher it lost (not waited for).
  struct LastRound {
    std::map<long, int> seats;
    std::map<long, SeatedLauncher> who;  // by launcher
    int restarts_used = 0;
    std::optional<long> lost;
    std::optional<JobFailure> failure;   // how it ended, where a failure or a loss ended it
    std::optional<long> failed;          // the launcher that failure names
    std::vector<BenchedNode> bench;      // the bench it left
    std::map<long, int> first_failures;  // by launcher: rounds its rank failed first
  };
  LastRound last_round(int round);
  JobFailure seated_lost(const LastRound& seated, int rank, const std::string& why) const;

 private:
  void bench_by_last_round(BenchBook& book, const LastRound& last, int round) const;
  void bench_stragglers(BenchBook& book, const LastRound& last, int round) const;
  // Said once: this node sits out (benched, or failing its checks) and waits for the job's end
  // (`meanwhile`: what it does instead, where it is not only waiting).
  void waits_benched(const std::string& why, const std::string& meanwhile = "");
  // Node 0's store's host sitting `round` out (node_group_keeper.cpp): it watches the round's
  // members for silence, then gives the next round's seats; the job's end where it ends.
  Result<Agreement> keep_store_through(int round, const std::map<long, int>& seats,
                                       const std::map<long, SeatedLauncher>& who,
                                       const std::string& why);
  void read_notices();     // the keeper: the round's freezes so far, without a watch
  void read_own_checks();  // this node's health checks' verdict, into what it says of itself
  void read_own_checks_if_stale();  // again, where the last look is older than kChecksFresh
  bool said_benched_ = false;
  void waits_as_spare(const std::string& why);  // said once while it waits
  // What a launcher waiting for its round says while it waits (node_group_progress.cpp,
  // wait_progress.hpp): `what` and the time left until `deadline` of --rdzv-timeout, where a
  // line is due. A hot spare and a benched node say nothing more.
  // `limit`: the flag the deadline is of, where not --rdzv-timeout ("--node-timeout 60 s").
  void say_progress(const std::string& what, Clock::time_point deadline,
                    const std::string& limit = "");
  // "node ranks 2, 3 of 4 have not come (come: node 0 at 10.0.0.1, node 1 at 10.0.0.2)", from
  // the round's entries as they are now.
  std::string arrivals_text();
  // Node 0: arrivals_text(), also written to the round's "arrivals" key for the others' lines.
  std::string publish_arrivals();
  // Another node: node 0's last such text, or that it has not said yet (one small key).
  std::string node0_arrivals(RendezvousClient& from);
  // A wait's slice in lead_round: until the next line or node 0's next word on the arrivals.
  std::chrono::milliseconds lead_slice(Clock::time_point deadline) const;
  static std::string waiter_text(const NodeInfo& self);  // "node 1 (host)", or the host
  static std::string rendezvous_text(const GroupOptions& options);
  // A waiting launcher that lost the rendezvous (node_group_comeback.cpp): node 0's store went
  // away or stopped answering it (node 0 lost, or this node cut off or paused), or its etcd
  // lease ended. come_back dials again (a new lease) and gives the round to wait for a seat
  // in; an error names what did not come back within --rdzv-timeout.
  bool rendezvous_lost(const Error& error);
  Result<int> come_back(int round);
  Result<int> rejoin_store(int round);
  Result<int> take_new_lease(int round);
  void forget_connections();
  // What the round that ended held goes before this node waits for the next: its watches,
  // its tripwire, the stores and ports it served its workers (a launcher waiting for a seat
  // holds what a spare holds; no store of a round that ended answers).
  void let_last_round_go();
  // A new node 0: the round the survivors resume, once one of them said it.
  std::optional<int> resumed_round();
  std::optional<JobFailure> admit_newcomers();  // node 0, --admit-newcomers at-once
  std::string elastic_key(int round, const std::string& name) const;
  std::string place_key(int round, long launcher) const;  // where its place is given
  Result<Agreement> lead_round();
  Result<Agreement> formed_again_without(const std::vector<int>& present);
  // Node 0 of an elastic round: the bench its seats' record carries, for its members.
  std::vector<BenchedNode> round_bench(int round);
  // A seated node whose checks failed after its seat was given (etcd seats the last round's
  // members without reading them): it ends the round without using a restart, and is benched.
  void leave_round_unhealthy(int round);
  Result<bool> open_workers_ports(Agreement& agreement);                   // node 0
  std::optional<std::string> relay_for(const Agreement& agreement) const;  // node 0
  std::string verdict_of(const Agreement& agreement, const std::string& error) const;
  std::vector<BenchedNode> sick_nodes(const std::vector<NodeInfo>& nodes) const;
  void record_bench(const std::vector<BenchedNode>& bench) const;  // through options_.benched
  // Under etcd, an elastic round after the first starts at once (node_group_round_at_once.cpp):
  // node 0 says its verdict with its own entry, a member's seat is its entry, and node 0 looks
  // at its members' "gone" keys while the round runs.
  bool starts_at_once(int round) const;
  Result<Agreement> said_at_once(Agreement ready, const std::string& said,
                                 const std::vector<std::optional<std::string>>& entered);
  std::optional<JobFailure> gone_member();
  Result<bool> said_done(int node);  // its workers all finished well (local_success)
  // A member's wait for node 0's verdict: its text, or nullopt where node 0's "gone" key came
  // first (the round is then ended as node 0's loss).
  Result<std::optional<std::string>> node0_verdict(RendezvousClient& from);
  // control_'s will (the round's abort), and with gone_too its lasting one (its "gone" key):
  // leaving on purpose; without, not this node's round to end.
  void clear_will(bool gone_too);
  // seen: the round's verdict where the join already read it.
  // The verdict: `seen` already, or waited for on `from`.
  Result<Agreement> follow_round(std::optional<std::string> seen, RendezvousClient& from);
  Result<bool> all_exist(const std::string& name);  // name/<node> for every node
  // NAME/<node> for the nodes from `first` on (but `skip`), a store call's worth at a time.
  std::vector<std::vector<std::string>> key_batches(const std::string& name, int first = 0,
                                                    int skip = -1) const;
  std::optional<JobFailure> find_silent_node();  // node 0
  std::optional<JobFailure> beat();              // a follower
  PeerNews hear_abort();                         // the watch connection has an answer
  PeerNews poll_round(bool readable);            // poll() but the notice
  // Notices across the nodes (node_group_notices.cpp): watched from the round's start, where
  // asked; each heard in turn; a freeze's allowance, the silence it adds to --node-timeout
  // for that member's node while it may be paused (none under etcd's leases).
  void watch_notices();
  std::string notice_key(int number) const;
  std::optional<Notice> hear_notice();
  void allow_freeze(const Notice& freeze);
  Clock::duration freeze_allowance(int member, Clock::time_point now) const;
  PeerNews finishing_news(std::chrono::steady_clock::time_point now);
  std::optional<JobFailure> stored_failure_or(JobFailure fallback);
  JobFailure lost_node(int node, const std::string& why) const;
  void wait_for_verdict_readers();
  std::chrono::milliseconds beat_interval() const;
  std::chrono::milliseconds watch_interval() const;
  // Node 0 (etcd: the rendezvous) cannot be reached: it is lost, or this node was (its own
  // silence reached --node-timeout: a long wait, a pause), and the job went on without it.
  JobFailure lost_contact(const std::string& why);
  // The rendezvous itself cannot be reached (node 0's store, or etcd).
  JobFailure lost_rendezvous(const std::string& why) const;
  bool etcd_in_grace(std::chrono::steady_clock::time_point asked) const;
  // Under etcd, this round's node 0 serves its workers a store of their own.
  Result<int> serve_workers_store();
  // Under etcd, a launcher that dies while its host lives is heard at once, not after its
  // lease (node_group_tripwire.cpp): each member holds a connection to the store this round's
  // node 0 serves, with a last will there.
  void open_events();
  void arm_tripwire();
  void disarm_tripwire();  // its leaving is no loss: the will cleared, the connection closed
  PeerNews hear_tripwire();
  bool came_to_round(int member);         // node 0: the member armed its tripwire
  Result<StoreClient> own_store() const;  // node 0: to the store it serves the workers
  // Node 0 under etcd, ending its round: its members hear the verdict on their tripwire at
  // once, not only from etcd, and never its store's closing taken for its death.
  void tell_members(const std::string& verdict);
  PeerNews write_heard();  // the loss heard on the tripwire, into the round's abort key
  Result<std::string> write_round_end(const std::string& verdict);  // node_group_round_end.cpp
  void keep_unwritten_end(const std::string& verdict);  // etcd: written at the next join
  Result<bool> write_unwritten_end();
  // What a verdict read from the rendezvous (a failure, or the job's completion) means here.
  PeerNews news_of(const std::string& verdict);

  GroupOptions options_;
  // The launcher serving node 0's store: node 0 of every round it is seated in.
  std::unique_ptr<StoreHost> host_;
  std::unique_ptr<RendezvousClient> control_;  // joins, heartbeats, reports
  Dialer dial_;                                // another connection to the rendezvous
  std::unique_ptr<RendezvousClient> watch_;    // blocked on this round's abort key
  // Blocked on the key of this round's next notice (GroupOptions::watch_notices): apart from
  // the abort's, whose wait is also this node's sign of life and ends when it is set.
  std::unique_ptr<RendezvousClient> notice_watch_;
  int next_notice_ = 0;        // the number of the notice it waits for
  bool notice_heard_ = false;  // one that ends the job came this round: no newcomer admitted
  struct FreezeAllowance {
    Clock::time_point from, until;  // when the node may be paused
    Clock::duration length;         // the pause
  };
  std::map<int, FreezeAllowance> freezes_;  // by node (the notice's node_rank)
  // etcd: the connection a waiting launcher waits for its seat on, following the round's
  // abort and verdict too (one watch for all three); the round's watch_ once it is seated.
  std::unique_ptr<RendezvousClient> seat_watch_;
  int seat_watch_round_ = -1;
  // etcd: the last round this launcher waited for its place in, or was seated in, under its
  // lease: one that comes back with its lease alive looks at its place there first (a seat
  // may have come meanwhile, or it had one: the round's members wait for it).
  int seat_round_ = -1;
  bool next_seat_due_ = false;  // etcd, elastic: watch_next_seat at the round's first tick
  bool counted_lost_ = false;  // this node silent past --node-timeout in its round: the job went on
  bool formed_again_ = false;  // the round being joined is formed again without a lost member
  Clock::time_point next_lapse_look_{};       // gone_among: etcd's leases counted no sooner
  std::string joining_phase_ = "run";         // join's phase, while it takes a seat
  std::unique_ptr<StoreHost> workers_store_;  // etcd, this round's node 0: the workers' store
  // This round's node 0: the workers' torch store, new each round (no key outlives a round).
  std::unique_ptr<StoreHost> torch_store_;
  // node 0: the ports this round's workers bind (held until they do: net/free_port.hpp)
  std::vector<int> round_ports_;
  // etcd: to that store: one connection waits for a member's will, one holds this launcher's
  // own (a connection that waits takes no other request, so the will could not be taken back).
  std::optional<StoreClient> tripwire_;
  std::optional<StoreClient> tripwire_will_;
  std::optional<std::string> heard_verdict_;  // heard on the tripwire, not yet in etcd
  std::optional<std::pair<std::string, std::string>> unwritten_end_;  // its abort key, verdict
  std::chrono::steady_clock::time_point write_heard_at_;
  UniqueFd events_;            // etcd: watch_'s and tripwire_'s descriptors
  bool tripwire_due_ = false;  // etcd: armed at the round's first poll (its workers run)
  // Node 0 of a round started at once: its members' node ranks by launcher number.
  std::map<long, int> seated_ids_;
  // This launcher's "gone" key is control_'s lasting will, which its look sets (node 0's
  // store: its one will, until its entry's replaces it).
  bool gone_will_set_ = false;
  Agreement agreement_;
  long launcher_id_ = -1;            // elastic: the job's number for this launcher (node 0's is 0)
  bool said_spare_ = false;          // elastic: this launcher said it waits as a hot spare
  Clock::time_point arrivals_said_;  // node 0: when it last wrote the round's arrivals
  WaitProgress progress_;            // while it waits for a round: when it says so next
  bool resumed_ = false;             // node 0 came back and took the survivors' state
  int resume_round_ = -1;
  int resume_restarts_ = 0;
  int round_ = -1;
  std::string phase_ = "run";
  bool finishing_ = false;      // local_success() was called this round
  bool rewatch_ = false;        // etcd: the abort key's watch must be started again
  bool quiet_said_ = false;     // this node's quiet key is set (--hang-timeout)
  std::string inquiry_;         // the number of this node's hang inquiry, as the store counts
  bool hang_declared_ = false;  // some node committed this inquiry: the job is hung
  bool all_done_ = false;       // node 0: every node finished; waiting for them to say goodbye
  Clock::time_point next_tick_;
  Clock::time_point goodbye_deadline_;
  Clock::time_point agreed_at_;     // this round's start: silence counts from here
  Clock::time_point last_poll_;     // when poll() ended last: a long gap is this node's own pause
  Clock::time_point last_resumed_;  // after a long gap between polls: this node was paused
  Clock::duration own_pause_{};     // that gap
  Clock::time_point last_contact_;  // a follower: node 0's last answer, or heartbeat taken
  Clock::time_point last_answer_;   // node 0's store's last answer on the watch; etcd's any
};

}  // namespace aml
