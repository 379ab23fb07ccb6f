#include "event_setup.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "metrics_setup.hpp"
#include "util/make_directories.hpp"

namespace aml {
namespace {

// The file: --events-file's, else DIR/events.jsonl under --log-dir DIR; "" for none.
Result<std::string> events_path(const Options& options) {
  if (options.events_file) {
    if (options.events_file->empty()) {
      return invalid("--events-file", "", "a file for the job's events, or none");
    }
    return *options.events_file == "none" ? "" : *options.events_file;
  }
  return options.log_dir ? *options.log_dir + "/events.jsonl" : "";
}

}  // namespace

Result<std::unique_ptr<JobWatch>> watch_job(const Options& options, const LaunchPlan& plan,
                                            const NodeIdentity& node) {
  auto path = events_path(options);
  if (!path) return path.error();
  auto watch = std::make_unique<JobWatch>();
  const EventSource source{node.node_rank, node.host, plan.run_id};
  if (path->empty()) {
    watch->log = EventLog::without_file(source);
  } else {
    if (!options.events_file && !make_directories(*options.log_dir)) {
      // The file is --log-dir's default: the folder is what the user named.
      return invalid("--log-dir", *options.log_dir,
                     "a folder this launcher can make (" + std::string(std::strerror(errno)) + ")");
    }
    auto opened = EventLog::open(*path, source);
    if (!opened) return opened.error();
    watch->log = std::move(*opened);
  }
  if (!options.job_events_file.empty()) {
    // Known at once where the node ranks are fixed; an elastic job's node 0 is known at each
    // round (rendezvous_formed_event).
    const bool node0 = !plan.topology.elastic && node.node_rank == 0 && node.rank <= 0;
    if (auto error = watch->log->keep_job_file(options.job_events_file, node0)) return *error;
  }
  watch->log->add_observer(&watch->clock);
  const Topology& t = plan.topology;
  if (!options.metrics_port.empty()) {
    watch->board = std::make_unique<MetricsBoard>(
        MetricsIdentity{node.host, plan.run_id, AML_VERSION, options.max_restarts});
    auto server = start_metrics(options, t, *watch->board);
    if (!server) return server.error();
    watch->server = std::move(*server);
    watch->log->add_observer(watch->board.get());
  }
  nlohmann::ordered_json launch;
  launch["command"] = options.command;
  launch["source"] = t.source;
  launch["nnodes"] = t.nnodes;
  launch["elastic"] = t.elastic ? nlohmann::ordered_json(std::to_string(t.elastic->min) + ":" +
                                                         std::to_string(t.elastic->max))
                                : nlohmann::ordered_json(nullptr);
  launch["nproc_per_node"] = t.nproc_per_node;
  launch["world_size"] = t.world_size;
  launch["max_restarts"] = options.max_restarts;
  launch["version"] = AML_VERSION;
  launch["pid"] = static_cast<long>(getpid());
  launch["metrics"] = watch->server ? nlohmann::ordered_json(watch->server->url())
                                    : nlohmann::ordered_json(nullptr);
  watch->log->write("launch", std::move(launch), node.rank);
  return watch;
}

namespace {

// What the summary says of a round (not its workers' exits: each was an event of its own).
void round_ended(EventLog& events, const RunOutcome& outcome, const NodeIdentity& node) {
  nlohmann::ordered_json round = outcome_json(outcome, node);
  round.erase("node_rank");  // the line's own
  round.erase("host");
  round.erase("workers");
  events.write("round_ended", std::move(round));
}

}  // namespace

void rendezvous_formed_event(JobWatch& watch, const std::string& phase, const Agreement& agreed,
                             std::chrono::steady_clock::time_point asked) {
  EventLog* const events = watch.log.get();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  if (agreed.ended) {
    events->write(
        "ended_while_waiting",
        {{"phase", phase}, {"exit_code", agreed.ended->exit_code}, {"waited_seconds", waited}});
    return;
  }
  events->set_round(agreed.round);
  events->set_node_rank(agreed.node_rank);
  // The round's node 0 has every node (Agreement::nodes): the job's view is its to write.
  const bool gives_seats =
      agreed.node_rank == 0 && agreed.nodes.size() == static_cast<std::size_t>(agreed.node_count);
  events->write_job_file(agreed.node_rank == 0);
  EventLog::Burst burst(events);
  events->write("rendezvous_formed",
                {{"phase", phase},
                 {"nodes", agreed.node_count},
                 {"restarts_used", agreed.restarts_used},
                 {"benched", agreed.bench.size()},
                 {"spares", agreed.spares},
                 {"generation", agreed.generation >= 0 ? nlohmann::json(agreed.generation)
                                                       : nlohmann::json(nullptr)},
                 {"waited_seconds", waited}});
  // Read only from a file or the metrics: a job without them pays nothing (32 ms at round 0 of
  // 4,096 nodes, benchmarks/bench_seat_events.cpp).
  const bool read = events->has_file() || events->writes_job_file() || watch.board != nullptr;
  if (!gives_seats || phase != "run" || !read) return;
  for (SeatNews& news : watch.seats.seated(agreed.round, agreed.nodes, 0)) {
    events->write(news.kind, std::move(news.details));
  }
}

void restart_events(EventLog* events, const RunOutcome& failed, const NodeIdentity& node, int next,
                    int max_restarts) {
  if (events == nullptr) return;
  round_ended(*events, failed, node);
  if (failed.remote_failure && failed.remote_failure->regroup) {
    events->write("regroup", {{"round", next}});
  } else {
    events->write("restart", {{"restart", next}, {"max_restarts", max_restarts}});
  }
}

void end_events(EventLog* events, const RunOutcome& outcome, const NodeIdentity& node) {
  if (events == nullptr) return;
  round_ended(*events, outcome, node);
  events->write("end", {{"exit_code", outcome.exit_code}, {"restarts", outcome.restarts}});
}

}  // namespace aml
