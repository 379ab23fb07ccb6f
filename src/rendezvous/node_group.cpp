#include "rendezvous/node_group.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "etcd/etcd_rendezvous.hpp"
#include "net/local_host.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/store_rendezvous.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
using std::chrono::milliseconds;
using namespace group_timing;

namespace {

// Who a launcher is, for the store's log of refusals.
std::string member_name(const NodeInfo& self) {
  return "the launcher on " + self.host + " (pid " + std::to_string(self.pid) + ")";
}

}  // namespace

// Node 0's store: node 0 serves it (elastic: the node at the endpoint, or on one host the
// first to take the port) and every node connects to it. etcd: every node holds a session.
Result<NodeGroup::Dialer> NodeGroup::dialer_for(GroupOptions& options,
                                                std::unique_ptr<StoreHost>& host) {
  if (options.backend.kind == RendezvousBackend::Kind::etcd) {
    etcd::SessionOptions session_options{options.backend.endpoints,
                                         "/aml-launch/" + options.token + "/", options.node_timeout,
                                         std::string(kJobEndKey)};
    auto session = etcd::EtcdSession::start(session_options, options.rdzv_timeout);
    if (!session) {
      Error error = session.error();
      error.expected += " (this node reaching the job's etcd within --rdzv-timeout " +
                        seconds_text(options.rdzv_timeout) + ")";
      return error;
    }
    return Dialer([session = *session](milliseconds) -> Result<std::unique_ptr<RendezvousClient>> {
      return std::unique_ptr<RendezvousClient>(new etcd::EtcdRendezvous(session));
    });
  }
  std::string dial = options.master_addr;
  if (options.self.node_rank == 0) {
    const std::string bind =
        listen_address_for(options.master_addr, local_host(options.master_addr));
    auto started = StoreHost::start(
        bind, options.master_port, options.token, options.auth.server_auth(options.token),
        "node 0 serves the rendezvous store on MASTER_PORT, so that port must be free there "
        "(the workers get a port of their own)",
        "aml-launch");
    if (started) {
      host = std::move(*started);
      dial = bind == "0.0.0.0" ? "127.0.0.1" : bind;
    } else if (options.elastic && is_loopback(options.master_addr)) {
      // Several launchers of an elastic job on one host, meeting on loopback: the first to
      // take the port serves the store, the others join it.
      options.self.node_rank = -1;
    } else {
      return started.error();
    }
  }
  return Dialer([dial, port = options.master_port, token = options.token, auth = options.auth,
                 member = member_name(options.self)](
                    milliseconds timeout) -> Result<std::unique_ptr<RendezvousClient>> {
    auto client =
        StoreClient::connect(dial, port, token, auth.launcher_credentials(token, member), timeout);
    if (!client) return client.error();
    return std::unique_ptr<RendezvousClient>(new StoreRendezvous(std::move(*client)));
  });
}

Result<std::unique_ptr<NodeGroup>> NodeGroup::start(GroupOptions options) {
  std::unique_ptr<StoreHost> host;
  auto dial = dialer_for(options, host);
  if (!dial) return dial.error();
  auto control = (*dial)(options.rdzv_timeout);
  if (!control) {
    Error error = control.error();
    error.expected +=
        " (" +
        (options.self.node_rank >= 0 ? "node " + std::to_string(options.self.node_rank)
                                     : std::string("this node")) +
        " joining node 0's rendezvous store at MASTER_ADDR=" + options.master_addr +
        " MASTER_PORT=" + std::to_string(options.master_port) + " within --rdzv-timeout " +
        seconds_text(options.rdzv_timeout) + ")";
    return error;
  }
  (*control)->set_reply_timeout(std::max(kShortestReplyTimeout, options.node_timeout));
  options.self.addr = host ? options.master_addr : (*control)->local_address();
  return std::unique_ptr<NodeGroup>(
      new NodeGroup(std::move(options), std::move(host), std::move(*control), std::move(*dial)));
}

bool NodeGroup::is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

NodeGroup::NodeGroup(GroupOptions options, std::unique_ptr<StoreHost> host,
                     std::unique_ptr<RendezvousClient> control, Dialer dial)
    : options_(std::move(options)),
      host_(std::move(host)),
      control_(std::move(control)),
      dial_(std::move(dial)) {}

// The connections (declared after host_) close before the store they talk to stops.
NodeGroup::~NodeGroup() {
  if (host_ && round_ >= 0) wait_for_verdict_readers();
}

// Node 0's store goes away with it: first every other node that is alive reads the job's
// verdict (one verdict on every node, DESIGN §5), bounded by --node-timeout. A node the
// verdict names as lost cannot read it and is not waited for.
void NodeGroup::wait_for_verdict_readers() {
  auto stored = control_->get(key("abort"), milliseconds(0));
  if (!stored || !*stored || **stored == kComplete) return;
  // The node it names reported it (or was found lost): it is not waited for.
  auto verdict = job_failure_from_json(**stored);
  const int lost = verdict ? verdict->member_or_node() : -1;
  const auto deadline = Clock::now() + options_.node_timeout;
  for (const auto& readers : key_batches("heard", 1, lost)) {
    auto all = control_->wait(readers, left_until(deadline));
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
  if (on_etcd()) return node0_address() + ":" + std::to_string(agreement_.worker_store_port);
  return options_.master_addr + ":" + std::to_string(options_.master_port);
}

std::string NodeGroup::node0_address() const {
  if (options_.self.node_rank == 0) return options_.self.addr;
  return agreement_.nodes.empty() ? options_.master_addr : agreement_.nodes.front().addr;
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
  f.status = std::string(JobFailure::kLauncherLost) + ": " + why;
  f.time = utc_timestamp(std::chrono::system_clock::now());
  return f;
}

std::optional<JobFailure> NodeGroup::stored_failure_or(JobFailure fallback) {
  auto stored = control_->compare_set(key("abort"), "", to_json(fallback));
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
  auto stored = control_->compare_set(key("abort"), "", to_json(mine));
  if (mine.member != 0) (void)control_->set(node_key("heard", mine.member), "1");
  if (!stored || *stored == kComplete) return std::nullopt;
  return job_failure_from_json(*stored);
}

void NodeGroup::local_success() {
  finishing_ = true;
  (void)control_->set(node_key("done", options_.self.node_rank), "1");
  // Its workers all finished well: from here on its launcher going away costs the job nothing.
  // Except node 0's under etcd: it writes the job's completion, and its death must be heard.
  const bool writes_completion = on_etcd() && options_.self.node_rank == 0;
  if (!host_ && !writes_completion) (void)control_->clear_last_will();
  next_tick_ = Clock::now();  // look at once whether the others are done too
}

// Node 0: a follower the store has not heard from for --node-timeout is lost, unless it
// finished (and may have gone).
std::optional<JobFailure> NodeGroup::find_silent_node() {
  if (Clock::now() - agreed_at_ < options_.node_timeout) return std::nullopt;  // all renewing
  auto silent = control_->silent(options_.node_timeout);
  if (!silent) {
    // Node 0's own store: should not be. etcd: unreachable a moment (a member lost, a leader
    // being elected), or for good.
    if (host_) return lost_node(0, silent.error().message());
    return etcd_in_grace() ? std::nullopt
                           : std::optional<JobFailure>(lost_contact(silent.error().message()));
  }
  // Named by round: a launcher of an earlier round still connected (one that was paused,
  // now waiting for a seat) is not this round's member of that rank.
  const std::string prefix = key("member/");
  for (const std::string& name : *silent) {
    if (!name.starts_with(prefix)) continue;
    const int node = std::atoi(name.c_str() + prefix.size());
    auto done = control_->check({node_key("done", node)});
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
// etcd: a call failed, but etcd answered within --node-timeout: a member lost or a leader
// being elected is not the rendezvous's loss; the next tick tries again.
bool NodeGroup::etcd_in_grace() const {
  return on_etcd() && Clock::now() - last_answer_ < options_.node_timeout;
}

std::optional<JobFailure> NodeGroup::beat() {
  if (rewatch_) {  // etcd: the watch on the abort key broke a moment ago
    if (auto again = watch_->start_get(key("abort"), watch_interval()); again) {
      rewatch_ = false;
    } else if (!etcd_in_grace()) {
      return lost_contact(again.error().message());
    }
  }
  auto sent = control_->heartbeat();
  if (!sent) {
    if (etcd_in_grace()) return std::nullopt;
    return lost_contact("no heartbeat taken for --node-timeout " +
                        seconds_text(options_.node_timeout) + " (" + sent.error().message() +
                        "): paused, hung, cut off or gone");
  }
  last_contact_ = Clock::now();
  if (*sent) last_answer_ = last_contact_;  // the rendezvous itself answered
  // Its kernel takes the heartbeats, but the store itself has not answered the watch's wait
  // for --node-timeout: node 0's launcher is stopped or starved (unless this node was).
  const auto unanswered = last_contact_ - last_answer_;
  if (!on_etcd() && unanswered >= options_.node_timeout && own_pause_ < options_.node_timeout) {
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
    if (etcd_in_grace()) {
      rewatch_ = true;  // beat() watches again
      return news;
    }
    news.failure =
        lost_contact("the connection to the rendezvous closed (" + heard.error().message() + ")");
    return news;
  }
  last_contact_ = last_answer_ = Clock::now();
  if (!*heard) {
    // The long wait ended with nothing to say: wait again.
    if (auto again = watch_->start_get(key("abort"), watch_interval()); !again) {
      if (etcd_in_grace()) {
        rewatch_ = true;
      } else {
        news.failure = lost_contact(again.error().message());
      }
    }
    return news;
  }
  if (**heard == kComplete) {
    // Node 0 wrote it and waits for the goodbyes (finishing_news).
    if (options_.self.node_rank == 0) return news;
    (void)control_->clear_last_will();  // leaving on purpose
    (void)control_->set(node_key("goodbye", options_.self.node_rank), "1");
    news.complete = true;
    return news;
  }
  // Node 0 keeps the store up until every node has read this.
  (void)control_->set(node_key("heard", options_.self.node_rank), "1");
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
    auto verdict = control_->compare_set(key("abort"), "", kComplete);
    if (verdict && *verdict != kComplete) {
      // A failure came first after all.
      auto failure = job_failure_from_json(*verdict);
      news.failure = failure ? *failure : lost_node(0, "an unreadable failure report");
      return news;
    }
    (void)control_->set(node_key("goodbye", 0), "1");  // node 0 waits for no goodbye of its own
    all_done_ = true;
    goodbye_deadline_ = now + kGoodbyeWait;
  }
  auto gone = all_exist("goodbye");
  news.complete = (gone && *gone) || now >= goodbye_deadline_;
  return news;
}

JobFailure NodeGroup::lost_contact(const std::string& why) {
  // Its last answer came long ago, or this node itself just did not run for that long. Under
  // etcd, only the latter: a member of etcd's that does not answer is etcd's loss, not this
  // node's (a node cut off from etcd cannot tell which).
  const auto unanswered = on_etcd() ? Clock::duration{} : Clock::now() - last_contact_;
  const auto silent = std::max<Clock::duration>(unanswered, own_pause_);
  if (silent >= options_.node_timeout) {
    return lost_node(options_.self.node_rank,
                     "this node was silent for " +
                         seconds_text(std::chrono::duration_cast<milliseconds>(silent)) +
                         " (a paused VM, a starved host: over --node-timeout " +
                         seconds_text(options_.node_timeout) + "), and the job went on without it");
  }
  return on_etcd() ? lost_rendezvous(why) : lost_node(0, why);
}

JobFailure NodeGroup::lost_rendezvous(const std::string& why) const {
  JobFailure f;
  f.host = options_.backend.describe(store_address());
  f.exit_code = 1;
  f.status = "the job's rendezvous was lost: " + f.host + " could not be reached for " +
             "--node-timeout " + seconds_text(options_.node_timeout) + " (" + why + ")";
  f.time = utc_timestamp(std::chrono::system_clock::now());
  return f;
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
  // Under etcd node 0 holds a lease like every node: it beats too.
  news.failure = !leader || on_etcd() ? beat() : std::nullopt;
  if (leader && !news.failure) news.failure = find_silent_node();
  if (leader && !news.failure) news.failure = admit_newcomers();
  if (news.failure || !leader || !finishing_) return news;
  return finishing_news(now);
}

}  // namespace aml
