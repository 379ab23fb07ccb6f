#include "rendezvous/node_group.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "net/free_port.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
namespace {

using std::chrono::milliseconds;

// Death and silence are different (DESIGN §5). A launcher that dies closes its connections: a
// follower's last will names it in the abort key at once, node 0's store goes away with it.
// Silence (a paused VM, a starved host) is loss only after --node-timeout. A follower sends a
// heartbeat 10 times in that span (within these bounds), one way: the store notes when it
// last heard each follower, and node 0 asks it for the silent ones (one call, not one per
// node). A follower learns that node 0's host is paused or cut off from its own kernel: a
// heartbeat not acknowledged within --node-timeout closes the connection (TCP_USER_TIMEOUT).
// No store call of a running job gives up sooner than --node-timeout.
constexpr milliseconds kFastestBeat{200};
constexpr milliseconds kSlowestBeat{6000};  // at 4,096 nodes, 0.7 % of a core on node 0
// While node 0 waits for the others to finish, it looks this often whether they have.
constexpr milliseconds kFinishTick{200};
constexpr milliseconds kShortestReplyTimeout{1500};
// Node 0 keeps the store up this long at most for the others to say goodbye.
constexpr milliseconds kGoodbyeWait{5000};
// The watch's wait is answered at least this often (a quarter of --node-timeout, within these).
constexpr milliseconds kShortestWatch{250};
constexpr milliseconds kLongestWatch{3600 * 1000};
constexpr std::size_t kKeysPerCall = 1000;  // below the store's limit for one check or wait
// Node 0 writes this into the abort key once every node's workers finished well: the same
// watch that would have brought a failure tells every follower the job is done.
constexpr std::string_view kComplete = "complete";

milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(
                                       deadline - std::chrono::steady_clock::now()));
}

std::string seconds_text(milliseconds ms) {
  auto s = ms.count() / 1000.0;
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

}  // namespace

Result<std::unique_ptr<NodeGroup>> NodeGroup::start(GroupOptions options) {
  std::unique_ptr<StoreHost> host;
  std::string dial = options.master_addr;
  if (options.self.node_rank == 0) {
    auto started =
        StoreHost::start(options.master_port, options.token,
                         "node 0 serves the rendezvous store on MASTER_PORT, so that "
                         "port must be free there (the workers get a port of their own)");
    if (!started) return started.error();
    host = std::move(*started);
    dial = "127.0.0.1";
  }
  auto control =
      StoreClient::connect(dial, options.master_port, options.token, options.rdzv_timeout);
  if (!control) {
    Error error = control.error();
    error.expected +=
        " (node " + std::to_string(options.self.node_rank) +
        " could not reach node 0's rendezvous store at MASTER_ADDR=" + options.master_addr +
        " MASTER_PORT=" + std::to_string(options.master_port) + " within --rdzv-timeout " +
        seconds_text(options.rdzv_timeout) + ")";
    return error;
  }
  control->set_reply_timeout(std::max(kShortestReplyTimeout, options.node_timeout));
  options.self.addr = options.self.node_rank == 0 ? options.master_addr : control->local_address();
  return std::unique_ptr<NodeGroup>(
      new NodeGroup(std::move(options), std::move(host), std::move(*control)));
}

NodeGroup::NodeGroup(GroupOptions options, std::unique_ptr<StoreHost> host, StoreClient control)
    : options_(std::move(options)), host_(std::move(host)), control_(std::move(control)) {}

// The connections (declared after host_) close before the store they talk to stops.
NodeGroup::~NodeGroup() {
  if (host_ && round_ >= 0) wait_for_verdict_readers();
}

// Node 0's store goes away with it: first every other node that is alive reads the job's
// verdict (one verdict on every node, DESIGN §5), bounded by --node-timeout. A node the
// verdict names as lost cannot read it and is not waited for.
void NodeGroup::wait_for_verdict_readers() {
  auto stored = control_.get(key("abort"), milliseconds(0));
  if (!stored || !*stored || **stored == kComplete) return;
  // The node it names reported it (or was found lost): it is not waited for.
  auto verdict = job_failure_from_json(**stored);
  const int lost = verdict ? verdict->member_or_node() : -1;
  const auto deadline = Clock::now() + options_.node_timeout;
  for (const auto& readers : key_batches("heard", 1, lost)) {
    auto all = control_.wait(readers, left_until(deadline));
    if (!all || !*all) return;
  }
}

std::vector<std::vector<std::string>> NodeGroup::key_batches(const std::string& name, int first,
                                                             int skip) const {
  std::vector<std::vector<std::string>> batches;
  for (int node = first; node < options_.self.nnodes; ++node) {
    if (node == skip) continue;
    if (batches.empty() || batches.back().size() == kKeysPerCall) batches.emplace_back();
    batches.back().push_back(node_key(name, node));
  }
  return batches;
}

milliseconds NodeGroup::watch_interval() const {
  return std::clamp(options_.node_timeout / 4, kShortestWatch, kLongestWatch);
}

milliseconds NodeGroup::beat_interval() const {
  return std::clamp(options_.node_timeout / 10, kFastestBeat, kSlowestBeat);
}

std::string NodeGroup::members_word() const {
  return options_.self.per_process() ? "rank" : "node rank";
}

std::string NodeGroup::key(const std::string& name) const {
  return "aml/" + phase_ + "/" + std::to_string(round_) + "/" + name;
}

std::string NodeGroup::node_key(const std::string& name, int node) const {
  return key(name + "/" + std::to_string(node));
}

std::string NodeGroup::round_name() const {
  return phase_ + " round " + std::to_string(round_) + " of run " + options_.self.run_id;
}

std::string NodeGroup::store_address() const {
  return options_.master_addr + ":" + std::to_string(options_.master_port);
}

Result<Agreement> NodeGroup::join(int round, const std::string& phase) {
  round_ = round;
  phase_ = phase;
  finishing_ = false;
  all_done_ = false;
  quiet_said_ = false;
  watch_.reset();
  const NodeInfo& self = options_.self;
  const std::string me = to_json(self);
  auto stored = control_.compare_set(node_key("node", self.node_rank), "", me);
  if (!stored) return stored.error();
  if (*stored != me) {
    auto other = node_info_from_json(*stored);
    return invalid(self.per_process() ? "RANK" : "NODE_RANK", std::to_string(self.node_rank),
                   "a node rank of its own; " +
                       (other ? other->describe() + " at " + other->addr : "another node") +
                       " joined with it first (this is " + self.host + " at " + self.addr + ")");
  }
  // A connection of its own stays blocked on this round's abort key: whoever fails first
  // sets it, and every node hears at once.
  if (self.node_rank != 0) {
    // The store tells node 0 when this node's heartbeats stop.
    if (auto named = control_.identify(std::to_string(self.node_rank)); !named) {
      return named.error();
    }
  }
  const std::string dial = self.node_rank == 0 ? "127.0.0.1" : options_.master_addr;
  auto watch = StoreClient::connect(dial, options_.master_port, options_.token,
                                    std::max(kShortestReplyTimeout, options_.node_timeout));
  if (!watch) return watch.error();
  watch->set_reply_timeout(std::max(kShortestReplyTimeout, options_.node_timeout));
  watch_.emplace(std::move(*watch));
  if (self.node_rank != 0) {
    // A follower that dies after the verdict has "read" it: node 0 waits for it no longer.
    if (auto will = watch_->set_last_will(node_key("heard", self.node_rank), "gone"); !will) {
      return will.error();
    }
  }
  if (auto started = watch_->start_get(key("abort"), watch_interval()); !started) {
    return started.error();
  }
  auto agreed = self.node_rank == 0 ? lead_round() : follow_round();
  if (!agreed) return agreed;
  agreement_ = *agreed;
  if (self.node_rank != 0) {
    // If this launcher dies (SIGKILL, the OOM killer, its host), the store says so for it.
    JobFailure died = lost_node(self.node_rank, "it died (its connection to the store closed)");
    died.time.clear();  // not known when it is written
    if (auto will = control_.set_last_will(key("abort"), to_json(died)); !will) {
      return will.error();
    }
  }
  const auto now = Clock::now();
  next_tick_ = now + beat_interval();
  agreed_at_ = now;
  last_poll_ = now;
  last_contact_ = now;
  last_answer_ = now;
  return agreed;
}

Result<bool> NodeGroup::all_exist(const std::string& name) {
  for (const auto& keys : key_batches(name)) {
    auto present = control_.check(keys);
    if (!present || !*present) return present;
  }
  return true;
}

Result<Agreement> NodeGroup::lead_round() {
  const int nnodes = options_.self.nnodes;
  const auto deadline = Clock::now() + options_.rdzv_timeout;
  nlohmann::ordered_json verdict;
  verdict["error"] = "";
  Agreement agreement;
  agreement.round = round_;
  // Every node's info, in order: one call waits for a thousand nodes at once, all of them
  // until the common deadline.
  std::vector<int> present;
  int node = 0;
  for (const auto& keys : key_batches("node")) {
    auto infos = control_.get_all(keys, left_until(deadline));
    if (!infos) return infos.error();
    for (const auto& info : *infos) {
      const int this_node = node++;
      if (!info) continue;
      auto parsed = node_info_from_json(*info);
      if (!parsed) return invalid("rendezvous", *info, "a node description from aml-launch");
      agreement.nodes.push_back(*parsed);
      present.push_back(this_node);
    }
  }
  std::string error;
  if (static_cast<int>(present.size()) < nnodes) {
    error = "every node to join within --rdzv-timeout " + seconds_text(options_.rdzv_timeout) +
            "; " + members_word() + "(s) " + missing_node_ranks(nnodes, present) + " of " +
            std::to_string(nnodes) + " did not";
  } else if (auto problem = disagreement(agreement.nodes)) {
    error = "nodes that agree on the job; " + *problem;
  } else {
    auto port = free_tcp_port();
    if (!port) return port.error();
    agreement.worker_master_port = *port;
  }
  verdict["error"] = error;
  verdict["worker_master_port"] = agreement.worker_master_port;
  agreement.node_count = static_cast<int>(agreement.nodes.size());
  verdict["node_count"] = agreement.node_count;
  const bool all_needed = std::any_of(agreement.nodes.begin(), agreement.nodes.end(),
                                      [](const NodeInfo& node) { return !node.tf_ports.empty(); });
  auto& nodes = verdict["nodes"] = nlohmann::ordered_json::array();
  for (const NodeInfo& node : agreement.nodes) {
    nodes.push_back(nlohmann::ordered_json::parse(to_json(node)));
    if (!all_needed) break;  // node 0's alone
  }
  if (auto set = control_.set(key("verdict"), verdict.dump()); !set) return set.error();
  if (error.empty()) return agreement;
  // The store goes away with this launcher: first let the nodes that came read why.
  std::vector<std::string> readers;
  for (int node : present) {
    if (node != 0) readers.push_back(node_key("verdict-read", node));
  }
  if (!readers.empty()) (void)control_.wait(readers, kGoodbyeWait);
  return invalid("rendezvous", round_name(), error);
}

Result<Agreement> NodeGroup::follow_round() {
  // Node 0 decides within the same timeout; a little more lets its verdict arrive.
  auto text = control_.get(key("verdict"), options_.rdzv_timeout + options_.node_timeout);
  if (!text) {
    Error error = text.error();
    error.expected += " (node 0's launcher went away during the rendezvous)";
    return error;
  }
  if (!*text) {
    std::vector<int> present;
    for (int node = 0; node < options_.self.nnodes; ++node) {
      auto there = control_.check({node_key("node", node)});
      if (there && *there) present.push_back(node);
    }
    return invalid("rendezvous", round_name(),
                   "every node to join within --rdzv-timeout " +
                       seconds_text(options_.rdzv_timeout) + "; " + members_word() + "(s) " +
                       missing_node_ranks(options_.self.nnodes, present) + " of " +
                       std::to_string(options_.self.nnodes) + " did not");
  }
  (void)control_.set(node_key("verdict-read", options_.self.node_rank), "1");
  auto verdict = nlohmann::json::parse(**text, nullptr, false);
  if (verdict.is_discarded() || !verdict.is_object()) {
    return invalid("rendezvous", **text, "node 0's verdict as JSON");
  }
  std::string error = verdict.value("error", std::string("no verdict"));
  if (!error.empty()) return invalid("rendezvous", round_name(), error);
  Agreement agreement;
  agreement.round = round_;
  agreement.worker_master_port = verdict.value("worker_master_port", 0);
  for (const auto& node : verdict.value("nodes", nlohmann::json::array())) {
    auto parsed = node_info_from_json(node.dump());
    if (!parsed) return invalid("rendezvous", node.dump(), "a node description from aml-launch");
    agreement.nodes.push_back(*parsed);
  }
  agreement.node_count = verdict.value("node_count", static_cast<int>(agreement.nodes.size()));
  return agreement;
}

int NodeGroup::fd() const { return watch_ ? watch_->fd() : -1; }

int NodeGroup::next_poll_ms() const {
  auto left = std::chrono::duration_cast<milliseconds>(next_tick_ - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left + 1, 0, beat_interval().count()));
}

JobFailure NodeGroup::lost_node(int member, const std::string& why) const {
  JobFailure f;
  f.member = member;
  const auto& nodes = agreement_.nodes;
  const NodeInfo* info = member == options_.self.node_rank ? &options_.self
                         : member < static_cast<int>(nodes.size())
                             ? &nodes[static_cast<std::size_t>(member)]
                             : nullptr;
  const bool per_process = options_.self.per_process();
  f.node_rank = info ? info->node() : per_process ? -1 : member;
  f.host = info ? info->host : member == 0 ? options_.master_addr : "";
  if (per_process) f.rank = member;  // that rank's launcher (no pid: not its worker)
  f.exit_code = 1;
  f.status = "its launcher was lost: " + why;
  f.time = utc_timestamp(std::chrono::system_clock::now());
  return f;
}

std::optional<JobFailure> NodeGroup::stored_failure_or(JobFailure fallback) {
  auto stored = control_.compare_set(key("abort"), "", to_json(fallback));
  if (stored) {
    if (auto first = job_failure_from_json(*stored)) return first;
  }
  return fallback;
}

std::optional<JobFailure> NodeGroup::report(const JobFailure& failure) {
  JobFailure mine = failure;
  mine.member = options_.self.node_rank;
  mine.node_rank = options_.self.node();
  mine.host = options_.self.host;
  // Per process, a stop or a lost launcher is that rank's.
  if (options_.self.per_process() && mine.rank < 0) mine.rank = mine.member;
  // First come, first named: a report after another node's changes nothing. The reply holds
  // the job's verdict, whichever it is: this node has read it.
  auto stored = control_.compare_set(key("abort"), "", to_json(mine));
  if (mine.member != 0) (void)control_.set(node_key("heard", mine.member), "1");
  if (!stored || *stored == kComplete) return std::nullopt;
  return job_failure_from_json(*stored);
}

void NodeGroup::local_success() {
  finishing_ = true;
  (void)control_.set(node_key("done", options_.self.node_rank), "1");
  // Its workers all finished well: from here on its launcher going away costs the job nothing.
  if (options_.self.node_rank != 0) (void)control_.clear_last_will();
  next_tick_ = Clock::now();  // look at once whether the others are done too
}

// Node 0: a follower the store has not heard from for --node-timeout is lost, unless it
// finished (and may have gone).
std::optional<JobFailure> NodeGroup::find_silent_node() {
  if (Clock::now() - agreed_at_ < options_.node_timeout) return std::nullopt;  // all renewing
  auto silent = control_.silent(options_.node_timeout);
  if (!silent) return lost_node(0, silent.error().message());  // our own store: should not be
  for (const std::string& name : *silent) {
    const int node = std::atoi(name.c_str());
    auto done = control_.check({node_key("done", node)});
    if (done && *done) continue;
    const std::string limit = seconds_text(options_.node_timeout);
    return stored_failure_or(lost_node(node, "no heartbeat for over " + limit +
                                                 " (--node-timeout " + limit +
                                                 "): paused, hung or cut off"));
  }
  return std::nullopt;
}

// A follower's heartbeat. It fails once node 0 is gone: its launcher died (the connection
// closed), or its host did not acknowledge this node's heartbeats for --node-timeout.
std::optional<JobFailure> NodeGroup::beat() {
  if (auto sent = control_.heartbeat(); !sent) {
    return lost_contact("no heartbeat taken for --node-timeout " +
                        seconds_text(options_.node_timeout) + " (" + sent.error().message() +
                        "): paused, hung, cut off or gone");
  }
  last_contact_ = Clock::now();
  // Its kernel takes the heartbeats, but the store itself has not answered the watch's wait
  // for --node-timeout: node 0's launcher is stopped or starved (unless this node was).
  const auto unanswered = last_contact_ - last_answer_;
  if (unanswered >= options_.node_timeout && own_pause_ < options_.node_timeout) {
    const std::string limit = seconds_text(options_.node_timeout);
    return lost_node(0, "its store did not answer for over " + limit + " (--node-timeout " + limit +
                            "): paused, hung or starved");
  }
  return std::nullopt;
}

PeerNews NodeGroup::hear_abort() {
  PeerNews news;
  auto heard = watch_->finish_get();
  if (!heard) {
    news.failure = lost_contact("the connection to its store closed");
    return news;
  }
  last_contact_ = last_answer_ = Clock::now();
  if (!*heard) {
    // The long wait ended with nothing to say: wait again.
    if (auto again = watch_->start_get(key("abort"), watch_interval()); !again) {
      news.failure = lost_contact(again.error().message());
    }
    return news;
  }
  if (**heard == kComplete) {
    // Node 0 wrote it and waits for the goodbyes (finishing_news).
    if (options_.self.node_rank == 0) return news;
    (void)control_.clear_last_will();  // leaving on purpose
    (void)control_.set(node_key("goodbye", options_.self.node_rank), "1");
    news.complete = true;
    return news;
  }
  // Node 0 keeps the store up until every node has read this.
  (void)control_.set(node_key("heard", options_.self.node_rank), "1");
  auto failure = job_failure_from_json(**heard);
  news.failure = failure ? *failure : lost_node(0, "it sent an unreadable failure report");
  return news;
}

// Node 0, its own workers done: once every node's are, the job is complete; the store stays
// up until each has said goodbye (or a short while).
PeerNews NodeGroup::finishing_news(Clock::time_point now) {
  PeerNews news;
  if (!all_done_) {
    auto done = all_exist("done");
    if (!done || !*done) return news;
    auto verdict = control_.compare_set(key("abort"), "", kComplete);
    if (verdict && *verdict != kComplete) {
      // A failure came first after all.
      auto failure = job_failure_from_json(*verdict);
      news.failure = failure ? *failure : lost_node(0, "an unreadable failure report");
      return news;
    }
    (void)control_.set(node_key("goodbye", 0), "1");  // node 0 waits for no goodbye of its own
    all_done_ = true;
    goodbye_deadline_ = now + kGoodbyeWait;
  }
  auto gone = all_exist("goodbye");
  news.complete = (gone && *gone) || now >= goodbye_deadline_;
  return news;
}

JobFailure NodeGroup::lost_contact(const std::string& why) {
  // Its last answer came long ago, or this node itself just did not run for that long.
  const auto silent = std::max<Clock::duration>(Clock::now() - last_contact_, own_pause_);
  if (silent >= options_.node_timeout) {
    return lost_node(options_.self.node_rank,
                     "this node was silent for " +
                         seconds_text(std::chrono::duration_cast<milliseconds>(silent)) +
                         " (a paused VM, a starved host: over --node-timeout " +
                         seconds_text(options_.node_timeout) + "), and the job went on without it");
  }
  return lost_node(0, why);
}

PeerNews NodeGroup::poll(bool readable) {
  PeerNews news;
  const auto polled = Clock::now();
  const auto gap = polled - last_poll_;
  last_poll_ = polled;
  const bool leader = options_.self.node_rank == 0;
  if (leader && gap >= options_.node_timeout) {
    // Node 0 waits on nothing remote: a gap this long is its own (a paused VM), and the other
    // nodes have counted it lost meanwhile. Launchers that its store found gone when it ran
    // again left because of that silence: it names itself, not them.
    const JobFailure paused =
        lost_node(0, "this node was silent for " +
                         seconds_text(std::chrono::duration_cast<milliseconds>(gap)) +
                         " (a paused VM, a starved host: over --node-timeout " +
                         seconds_text(options_.node_timeout) + ")");
    news.failure = stored_failure_or(paused);
    if (news.failure->pid == 0 && news.failure->stop_signal == 0) news.failure = paused;
    return news;
  }
  // This node did not run for a while (paused, starved): if node 0 is gone now, it may have
  // counted this node lost meanwhile.
  if (gap >= beat_interval()) own_pause_ = gap;
  if (readable && watch_) {
    news = hear_abort();
    if (news.failure || news.complete) return news;
  }
  const auto now = Clock::now();
  if (now < next_tick_) return news;
  next_tick_ = now + (leader && finishing_ ? kFinishTick : beat_interval());
  news.failure = leader ? find_silent_node() : beat();
  if (news.failure || !leader || !finishing_) return news;
  return finishing_news(now);
}

}  // namespace aml
