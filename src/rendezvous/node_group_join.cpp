// The rendezvous of each round (DESIGN §5): every node joins under its node rank (an elastic
// job's, given by node 0 just before: node_group_elastic.cpp); node 0 collects them all and
// writes one verdict that every node reads (node_group_verdict.cpp), with the workers' ports it
// picks here.
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "net/free_port.hpp"
#include "net/local_host.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "store/core/listen_socket.hpp"
#include "util/failpoint.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;

// A wait that failed on the rendezvous itself (its etcd lease ended or etcd out of reach; node
// 0's store gone or silent) is not this node's end: it comes back, as often as that happens (a
// silence again before its seat, one after it, or etcd answering again by the time it looks,
// are all the same loss). Each comeback waits up to --rdzv-timeout for the rendezvous; tries that
// fail back to back (each within --node-timeout of its start) give up after --rdzv-timeout. A
// wait that lasted (a spare's, for hours) before it failed is not one of those.
Result<Agreement> NodeGroup::join(int round, const std::string& phase) {
  std::optional<Clock::time_point> failing_since;
  for (;;) {
    const auto tried = Clock::now();
    auto agreed = join_round(round, phase);
    if (agreed) agreed->generation = control_->generation();
    if (agreed || !rendezvous_lost(agreed.error())) return agreed;
    const auto now = Clock::now();
    if (!failing_since || now - tried > options_.node_timeout) failing_since = now;
    if (now - *failing_since >= options_.rdzv_timeout) return agreed;
    if (options_.say) {
      options_.say("aml-launch: " + options_.self.host + ": its rendezvous failed (" +
                   agreed.error().message() + "); it comes back and waits for a seat\n");
    }
    auto resumed = come_back(round);
    if (!resumed) return resumed.error();
    round = *resumed;
    usleep(200000);  // a rendezvous that fails at once again is not asked in a tight loop
  }
}

void NodeGroup::let_last_round_go() {
  disarm_tripwire();
  events_.reset();  // open_events makes the round's descriptor anew
  watch_.reset();
  notice_watch_.reset();
  torch_store_.reset();
  workers_store_.reset();
  for (int port : round_ports_) release_tcp_port(port);
  round_ports_.clear();
}

Result<Agreement> NodeGroup::join_round(int round, const std::string& phase) {
  let_last_round_go();
  // The last round's end, where etcd could not take it then: the next round waits for it.
  if (auto written = write_unwritten_end(); !written) return written.error();
  seated_ids_.clear();
  notice_heard_ = false;
  progress_.begin(Clock::now());  // the first round's clock began with the dial
  int restarts_used = round;      // a fixed-size job restarts only after a failure
  joining_phase_ = phase;
  // This node's checks (begun with the rendezvous: at the launcher's start for the first
  // round); what it says of itself carries their verdict, so that it is never seated failing.
  read_own_checks();
  if (options_.elastic) {
    // Who is in this round, under which node rank, is settled first; then the round goes on
    // as a fixed-size one.
    // Node 0's store's host gives every round's seats; under etcd, whoever claims it first.
    auto seat = host_ ? decide_members(round) : take_seat(round);
    if (!seat || seat->ended) return seat;
    // A spare seated after a long wait: its checks as they are now. Not node 0's store's host,
    // which gave the seats: it sits a round out only as it begins one (keep_store_through);
    // benched after, it would wait as a spare, and nobody would give the next round's seats.
    if (!host_) read_own_checks_if_stale();
    if (!options_.self.health.empty()) {
      // Seated without its checks read (etcd's members of the round before): it ends this
      // round as one ended to regroup, and waits, benched, for the job's end.
      leave_round_unhealthy(seat->round);
      options_.self.node_rank = -1;
      seat = take_seat(seat->round + 1);
      if (!seat || seat->ended) return seat;
    }
    round = seat->round;
    restarts_used = seat->restarts_used;
  }
  round_ = round;
  phase_ = phase;
  finishing_ = false;
  rewatch_ = false;
  all_done_ = false;
  quiet_said_ = false;
  const NodeInfo& self = options_.self;
  const std::string me = to_json(self);
  // If this launcher dies (SIGKILL, the OOM killer, its host), the store says so for it;
  // etcd, once its lease ends.
  JobFailure died = lost_node(
      self.node_rank,
      on_etcd() ? lease_ended_text() : std::string("it died (its connection to the store closed)"));
  died.time.clear();  // not known when it is written
  // Its entry, and with it its last will: its death from its entry on ends the round. Under
  // node 0's store the will goes first (calls one after another): set after the verdict, a
  // member killed between its entry and the will left nothing, and node 0 ran the round
  // without it for good (its watch's close is no silence). Under etcd, in one transaction with
  // whether the round's abort and verdict are there yet (if not, their watches begin at this
  // transaction, without reading them again). In a round that starts at once
  // (node_group_round_at_once.cpp), node 0 says its verdict in it too, and a member's seat is
  // its entry.
  const bool at_once = starts_at_once(round) && self.node_rank == 0;
  const bool seat_enters = starts_at_once(round) && self.node_rank != 0;
  Agreement ready;
  std::string said;
  if (at_once) {
    ready.round = round;
    ready.node_count = self.nnodes;
    ready.nodes = {self};
    if (auto opened = open_workers_ports(ready); !opened) return opened.error();
    ready.bench = round_bench(round);  // in the verdict: every member's summary names it
    said = verdict_of(ready, "");
  }
  std::vector<BatchOp> entry;
  if (!host_ && !on_etcd()) {
    entry.push_back(BatchOp::will(key("abort"), to_json(died)));
    gone_will_set_ = false;  // the connection's one will: this one replaces it
  }
  const std::size_t created = entry.size();  // where the entry's own answer is
  entry.push_back(BatchOp::create(node_key("node", self.node_rank), me));
  if (on_etcd()) {
    entry.push_back(BatchOp::will(key("abort"), to_json(died)));
    entry.push_back(BatchOp::get_now(key("abort")));
    entry.push_back(at_once ? BatchOp::create(key("verdict"), said)
                            : BatchOp::get_now(key("verdict")));
    if (at_once) entry.push_back(BatchOp::get_now(elastic_key(round, "seats")));
  }
  Result<std::vector<std::optional<std::string>>> entered =
      std::vector<std::optional<std::string>>{me, std::nullopt, std::nullopt, std::nullopt};
  if (!seat_enters) entered = control_->batch(entry);  // its will beside the look's
  if (!entered) return entered.error();
  const std::optional<std::string> stored = (*entered)[created];
  const std::optional<std::string> verdict = on_etcd() ? (*entered)[3] : std::nullopt;
  if (*stored != me) {
    if (!host_) clear_will(false);  // not this node's round to end
    auto other = node_info_from_json(*stored);
    return invalid(self.per_process() ? "RANK" : "NODE_RANK", std::to_string(self.node_rank),
                   "a node rank of its own; " +
                       (other ? other->describe() + " at " + other->addr : "another node") +
                       " joined with it first (this is " + self.host + " at " + self.addr + ")");
  }
  // A connection of its own stays blocked on this round's abort key: whoever fails first
  // sets it, and every node hears at once.
  // The connection this launcher waited for its seat on follows the round already.
  auto watch = seat_watch_ && seat_watch_round_ == round
                   ? Result<std::unique_ptr<RendezvousClient>>(std::move(seat_watch_))
                   : dial_(std::max(kShortestReplyTimeout, options_.node_timeout));
  seat_watch_.reset();
  if (!watch) return watch.error();
  (*watch)->set_reply_timeout(std::max(kShortestReplyTimeout, options_.node_timeout));
  watch_ = std::move(*watch);
  if (!host_) {
    // The watch asks again every watch_interval(): the store tells node 0 when this node's
    // asking stops (group_timing.hpp).
    if (auto named = watch_->identify(node_key("member", self.node_rank)); !named) {
      return named.error();
    }
  }
  if (!host_ && !on_etcd()) {
    // A follower that dies after the verdict has "read" it: node 0 waits for it no longer
    // (etcd keeps the verdict: nobody waits for its readers there).
    if (auto will = watch_->set_last_will(node_key("heard", self.node_rank), "gone"); !will) {
      return will.error();
    }
  }
  // The verdict yet to come is waited for on the abort's wait where the backend allows it
  // (etcd: one watch for both).
  const bool verdict_beside =
      self.node_rank != 0 && on_etcd() && !verdict && watch_->follow_beside(key("verdict"));
  if (auto started = watch_->start_get(key("abort"), watch_interval()); !started) {
    return started.error();
  }
  std::optional<std::string> heard = verdict;
  if (seat_enters && !heard) {
    auto node0 = node0_verdict(verdict_beside ? *watch_ : *control_);
    if (!node0) return node0.error();
    if (!*node0) return join(round + 1, phase);  // node 0 died before it said it: the next round
    heard = *node0;
  }
  auto agreed = at_once               ? said_at_once(std::move(ready), said, *entered)
                : self.node_rank == 0 ? lead_round()
                                      : follow_round(heard, verdict_beside ? *watch_ : *control_);
  if (!agreed) {
    if (!host_) clear_will(false);  // a failed rendezvous ends no round
    if (std::exchange(formed_again_, false)) {
      if (options_.say) {
        options_.say("aml-launch: " + options_.self.host + ": " + round_name() + ": expected " +
                     agreed.error().expected + "\n");
      }
      return join(round + 1, phase);
    }
    return agreed;
  }
  progress_.end();  // the round runs: nothing more is said of the wait
  counted_lost_ = false;
  agreed->node_rank = self.node_rank;
  agreed->restarts_used = restarts_used;
  agreement_ = *agreed;
  if (!host_) {
    failpoint("round-agreed");  // a test's fault: a member lost as its round begins
    if (auto watching = control_->watch_wills(self.node_rank < kWillWatchers); !watching) {
      return watching.error();
    }
  }
  watch_notices();
  open_events();
  const auto now = Clock::now();
  next_tick_ = now + beat_interval();
  agreed_at_ = now;
  last_poll_ = now;
  last_contact_ = now;
  last_answer_ = now;
  return agreed;
}

Result<int> NodeGroup::serve_workers_store() {
  torch_store_.reset();    // behind the last round's socket
  workers_store_.reset();  // the last round's
  const std::string bind = listen_address_for(options_.self.addr, local_host(options_.self.addr));
  store::ServerOptions serving;
  serving.token = options_.token;
  serving.auth = options_.auth.server_auth(options_.token);
  serving.torch_doorway = options_.torch_doorway;  // torch's door shares its port
  auto started = StoreHost::start_with(
      bind, 0, std::move(serving), "this round's node 0 serves its workers' store", "aml-launch");
  if (!started) return started.error();
  workers_store_ = std::move(*started);
  return workers_store_->port();
}

Result<bool> NodeGroup::all_exist(const std::string& name) {
  for (const auto& keys : key_batches(name)) {
    auto present = control_->check(keys);
    if (!present || !*present) return present;
  }
  return true;
}

// Where this round's workers meet (DESIGN §3): their MASTER_PORT is the store's own port
// (node 0's store: the job's; under etcd, or where that store's host sits the round out, the
// one this round's node 0 serves), where torch's
// door shares the socket, unless rank 0's worker hosts torch's store at a port of its own.
Result<bool> NodeGroup::open_workers_ports(Agreement& agreement) {
  torch_store_.reset();  // the last round's, with its keys and connections
  for (int port : round_ports_) release_tcp_port(port);
  round_ports_.clear();
  // Not node 0's store's host (etcd, or that host sits this round out): a store of its own.
  if (!host_) {
    auto store = serve_workers_store();
    if (!store) return store.error();
    agreement.worker_store_port = *store;
  }
  const int store_port = host_ ? options_.master_port : agreement.worker_store_port;
  keep_ports_free_after(store_port);
  if (options_.serve_workers_store) {
    for (const NodeInfo& node : agreement.nodes) options_.admitted->add(node.addr);
    auto started = StoreHost::start_behind(options_.torch_doorway, store_port, options_.admitted,
                                           "aml-launch");
    if (!started) return started.error();
    torch_store_ = std::move(*started);
    agreement.worker_master_port = store_port;
    agreement.relay = relay_for(agreement);
  } else {
    auto port = free_tcp_port();
    if (!port) return port.error();
    round_ports_.push_back(*port);
    agreement.worker_master_port = *port;
    keep_ports_free_after(*port);
  }
  if (options_.jax_coordinator) {
    auto port = free_tcp_port();
    if (!port) return port.error();
    round_ports_.push_back(*port);
    agreement.jax_coordinator_port = *port;
  }
  return true;
}

// Node 0 serves every rank directly where its descriptors hold them all (raised to the hard
// limit); the nodes' relays carry their workers over one connection a node where they do not,
// or where the job asked for them.
std::optional<std::string> NodeGroup::relay_for(const Agreement& agreement) const {
  if (options_.self.on_node >= 0) return std::nullopt;  // per process: no node has a relay
  if (options_.relay_asked) return std::string("--worker-store relay");
  const std::uint64_t nodes = std::max<std::uint64_t>(
      agreement.nodes.size(), static_cast<std::uint64_t>(std::max(agreement.node_count, 0)));
  const std::uint64_t ranks = nodes * static_cast<std::uint64_t>(options_.self.nproc_per_node);
  const std::uint64_t limit = raise_descriptor_limit();
  if (!holds_every_rank(limit, ranks, nodes)) {
    return "node 0's descriptor limit (" + std::to_string(limit) +
           ") cannot hold a connection for each of the job's " + std::to_string(ranks) + " ranks";
  }
  // The ranks connect at once: past the accept queue, each would wait out a SYN retransmit.
  const std::uint64_t queue = store::accept_queue_limit();
  if (queue > 0 && ranks > queue) {
    return "node 0's accept queue (net.core.somaxconn " + std::to_string(queue) +
           ") is shorter than the job's " + std::to_string(ranks) +
           " ranks connecting at once (raise it on node 0 for a connection a rank)";
  }
  return std::nullopt;
}

// The verdict every member reads: node 0's entry alone, unless every node needs them all.
std::string NodeGroup::verdict_of(const Agreement& agreement, const std::string& error) const {
  nlohmann::ordered_json verdict;
  verdict["error"] = error;
  verdict["worker_master_port"] = agreement.worker_master_port;
  verdict["worker_store_port"] = agreement.worker_store_port;
  if (agreement.relay) verdict["relay"] = *agreement.relay;
  verdict["jax_coordinator_port"] = agreement.jax_coordinator_port;
  verdict["node_count"] = agreement.node_count;
  if (!agreement.bench.empty()) {
    auto& bench = verdict["bench"] = nlohmann::ordered_json::array();
    for (const BenchedNode& node : agreement.bench) {
      bench.push_back(bench_json(node));
    }
  }
  const bool all_needed = std::any_of(agreement.nodes.begin(), agreement.nodes.end(),
                                      [](const NodeInfo& node) { return !node.tf_ports.empty(); });
  auto& nodes = verdict["nodes"] = nlohmann::ordered_json::array();
  for (const NodeInfo& node : agreement.nodes) {
    nodes.push_back(nlohmann::ordered_json::parse(to_json(node)));
    if (!all_needed) break;  // node 0's alone
  }
  return verdict.dump();
}

}  // namespace aml
