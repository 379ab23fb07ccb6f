// aml-launch: CLI -> topology -> plan -> run. Thin: every stage lives in src/.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <iostream>
#include <mutex>

#include "artifact.hpp"
#include "elastic_rounds.hpp"
#include "event_setup.hpp"
#include "exec_command.hpp"
#include "hang_files.hpp"
#include "health_setup.hpp"
#include "jax_plugin.hpp"
#include "job_summary.hpp"
#include "launcher_fields.hpp"
#include "local_worker_store.hpp"
#include "net/local_host.hpp"
#include "node_group_setup.hpp"
#include "notice_setup.hpp"
#include "options.hpp"
#include "output_setup.hpp"
#include "placement_setup.hpp"
#include "plan/launch_plan.hpp"
#include "plan_inputs.hpp"
#include "preflight_run.hpp"
#include "program_command.hpp"
#include "rendezvous/node_group.hpp"
#include "report_command.hpp"
#include "stop_while_waiting.hpp"
#include "supervisor/console.hpp"
#include "supervisor/crash_report.hpp"
#include "supervisor/failure_summary.hpp"
#include "supervisor/guardian.hpp"
#include "supervisor/job_stops.hpp"
#include "supervisor/run_workers.hpp"
#include "topology/detect.hpp"
#include "util/replace_file.hpp"
#include "util/write_all.hpp"

extern char** environ;

namespace aml {
namespace {

constexpr int kUsageError = 2;

int fail(const Error& error) {
  std::cerr << "aml-launch: error: " << error.message() << "\n";
  return kUsageError;
}

// What the launcher says on stderr between rounds and at the end, when no worker runs: a
// stderr that nobody reads (a stalled pipe) gets --term-timeout to take it, then the launcher
// goes on without it rather than hang there; after TERM or INT it waits for nothing.
void say_after_workers(const Options& options, const std::string& text,
                       bool stop_requested = false) {
  auto patience = std::chrono::milliseconds(
      stop_requested ? 0 : static_cast<long long>(options.term_timeout_seconds * 1000));
  write_within(STDERR_FILENO, text, patience);
}

int run(int argc, char** argv) {
  // A stop from the first instruction on is told, with the summary, wherever it lands
  // (job_stops.hpp); what runs no workers lets one act as it always did.
  sigset_t before_stops;
  hold_job_stops(&before_stops);
  install_crash_report(version_line());  // its own crash told with its stack, not in silence
  auto parsed = parse_command_line(argc, argv);
  const Options* const parsed_options = std::get_if<Options>(&parsed);
  const bool runs_workers = parsed_options && !parsed_options->dry_run && !parsed_options->exec &&
                            !parsed_options->program.words.empty();
  if (!runs_workers) sigprocmask(SIG_SETMASK, &before_stops, nullptr);
  if (auto* exit_now = std::get_if<ExitNow>(&parsed)) return exit_now->status;
  if (auto* error = std::get_if<Error>(&parsed)) return fail(*error);
  Options& options = std::get<Options>(parsed);
  // From here on this process may be the guardian: whatever happens to the supervisor,
  // nothing it started outlives it (supervisor/guardian.hpp). Split before the plan is made,
  // while the launcher is small; not for what runs no workers (--dry-run, --exec). The
  // supervisor inherits the stops held.
  if (runs_workers) {
    if (auto guardian_status = split_off_supervisor()) return *guardian_status;
  }

  Env env = env_from(environ);
  health_from_environment(options.health, env);
  const Machine machine = real_machine();
  if (auto error = count_nproc_word(options, env, machine)) return fail(*error);
  auto program = program_command(options.program, env, launcher_dir);
  if (!program) return fail(program.error());
  options.command = program->argv;
  options.program_interpreter = program->interpreter;
  options.program_about = program->about;
  auto topology = detect_topology(env, machine, options.overrides);
  if (!topology) return fail(topology.error());
  if (options.role) topology->role = *options.role;
  if (auto error = expand_launcher_fields(options, *topology)) return fail(*error);
  auto auth = job_auth_for(options, *topology, env);
  if (!auth) return fail(auth.error());
  auto backend = rendezvous_backend_for(options, env);
  if (!backend) return fail(backend.error());
  auto inputs = gather_inputs(options, *topology, env, machine, *auth, *backend);
  if (!inputs) return fail(inputs.error());
  const LaunchPlan plan = build_plan(*topology, *inputs);
  auto notices = notice_settings(options, env, plan.topology.node_rank, host_name());
  if (!notices) return fail(notices.error());

  if (options.dry_run) {
    // One write: the plans of several tasks sharing one output (srun -n 2) do not mix.
    (void)write_all(STDOUT_FILENO, plan_with_health(options, plan));
    return 0;
  }
  if (options.command.empty()) {
    return fail(missing("command", "a program to run after the flags (see --help)"));
  }
  // torchrun's flags that do something else here, or nothing: said once, before anything runs.
  for (const std::string& note : options.torchrun_notes)
    std::cerr << "aml-launch: " << note << "\n";
  if (plan.jax) {
    // The cluster environment the workers' Python runs first (their PYTHONPATH's sitecustomize).
    auto written = write_jax_plugin();
    if (!written) return fail(written.error());
  }
  if (options.exec) return exec_command(plan, env);
  if (options.preflight && plan.topology.elastic) {
    return fail(invalid("--preflight", *options.preflight,
                        "a fixed-size job: an elastic job's members change from round to "
                        "round, so a preflight of one round would not check the next"));
  }

  // The notice signal is held from here for the desk to read (its default would end the
  // launcher): the guardian passes it on, and between rounds it waits (run_workers.cpp).
  if (notices->launcher_signal != 0) {
    sigset_t notice_signal;
    sigemptyset(&notice_signal);
    sigaddset(&notice_signal, notices->launcher_signal);
    sigprocmask(SIG_BLOCK, &notice_signal, nullptr);
  }
  // A console that went away must not kill the launcher while its workers run.
  signal(SIGPIPE, SIG_IGN);
  // An elastic job's node rank is given at each round (round_of).
  NodeIdentity node{plan.topology.node_rank, host_name(),
                    inputs->per_process_group ? plan.topology.rank : -1};
  auto watch = watch_job(options, plan, node);
  if (!watch) return fail(watch.error());
  EventLog* const events = (*watch)->log.get();
  std::unique_ptr<NodeGroup> group;
  // This node's checks: begun now, so that the first round's overlap the connection to the
  // rendezvous; each later round begins them again (NodeGroup::join).
  auto health = std::make_shared<HealthWatch>(options.health);
  ElasticRounds rounds;  // an elastic job's: each round's members and why it ended
  if (plan.rendezvous) rounds.held_by(*plan.rendezvous);
  const bool grouped = joins_group(options, plan.topology);
  const bool checked = health_checked(options, plan.topology);
  if (checked) health->begin();
  // While this node waits for a round, a stop is told by a thread of its own (StopWhileWaiting),
  // under this lock, which the wait's own writes take too.
  std::recursive_mutex waiting;
  auto waits = [&] {
    return std::make_unique<StopWhileWaiting>(
        waiting, notices->launcher_signal, [&](int sig, long from) {
          stopped_while_waiting(sig, from, options, node, rounds, (*watch)->clock, events);
        });
  };
  if (grouped) {
    auto stop_watch = waits();
    auto started = start_node_group(
        options, plan, *inputs, *auth, *backend,
        [&options, &waiting](const std::string& text) {
          std::lock_guard held(waiting);
          say_after_workers(options, text);
        },
        health, machine_name(env),
        [&options, &plan, events, &rounds, &waiting](const BenchedNode& node) {
          std::lock_guard held(waiting);
          record_benched(options, plan, node);
          events->write("node_benched", bench_json(node));
          rounds.benched_one(node);
        },
        [events, &waiting](const char* kind, const std::string& why) {
          std::lock_guard held(waiting);
          events->write(kind, {{"why", why}});
        });
    stop_watch.reset();
    if (!started) return rendezvous_failed(options, started.error(), node, rounds, (*watch)->clock);
    group = std::move(*started);
  }
  if (!grouped && checked) {
    if (auto failed = alone_health_failure(*health)) {
      // Nothing was started: the status of every other node of a job that stops at its check.
      std::cerr << "aml-launch: error: " << *failed << "\n";
      return kUsageError;
    }
  }
  // One node alone: its workers' stores, new at each round (DESIGN §3).
  LocalWorkerStores local_stores;
  // Every node's launcher but node 0's: its workers' way to node 0's store, new at each round.
  std::unique_ptr<RelayHost> relay;
  // The workers of one round of a phase ("run", or "preflight" before it) running `command`.
  auto round_of = [&](const std::string& phase, const std::vector<std::string>& command,
                      int restart_count) -> Result<RoundLaunch> {
    PlanInputs round_inputs = *inputs;
    Topology round_topology = *topology;
    RoundLaunch launch;
    launch.restart_count = launch.restarts_used = restart_count;
    if (group) {
      relay.reset();  // the last round's store is gone, and its trunk with it
      const auto asked = std::chrono::steady_clock::now();
      events->write("rendezvous_begun", {{"phase", phase}, {"round", restart_count}});
      auto stop_watch = waits();
      auto agreed = group->join(restart_count, phase);
      stop_watch.reset();
      if (!agreed) return agreed.error();
      rendezvous_formed_event(**watch, phase, *agreed, asked);
      if (agreed->ended) {
        rounds.benched(agreed->bench);  // every node's summary lists the bench, its own included
        std::string said;
        launch.ended = ended_while_waiting(*agreed->ended, said);
        if (const HealthResult* failed = health->last().first_failure()) {
          said +=
              "aml-launch: this node held no rank: it failed its health check: " + failed->check +
              ": " + failed->figure + "\n";
        }
        say_after_workers(options, said);
        return launch;
      }
      rounds.benched(agreed->bench);
      if (!agreed->slower_ports.empty()) {
        say_after_workers(options,
                          "aml-launch: warning: a slower InfiniBand/RoCE port than the "
                          "other nodes': " +
                              agreed->slower_ports + "\n");
      }
      launch.restart_count = restart_count = agreed->round;
      launch.restarts_used = agreed->restarts_used;
      apply_agreement(*agreed, *group, round_inputs);
      // Under etcd no node is node 0 for good, nor where node 0's store's host sits a round
      // out: the workers meet at this round's.
      if (group->node0_serves_own_store()) round_topology.master_addr = group->node0_address();
      if (round_inputs.jax) {
        // Process 0 is on this round's node 0.
        round_inputs.jax->coordinator_host = round_topology.master_addr;
        round_inputs.jax->bind_host =
            listen_address_for(round_topology.master_addr, local_host(round_topology.master_addr));
      }
      if (round_topology.elastic) {
        // This round's place: the rendezvous gave the node rank and the node count.
        round_topology.node_rank = node.node_rank = agreed->node_rank;
        round_topology.nnodes = agreed->node_count;
        round_topology.world_size = agreed->node_count * round_topology.nproc_per_node;
        const std::string members = rounds.began(*agreed, group->member() == 0);
        if (!members.empty()) say_after_workers(options, members);
      }
      round_inputs.worker_master_addr.clear();
      if (agreed->relay && relays_workers_store(plan, *inputs, round_topology)) {
        auto started = RelayHost::start(round_topology.master_addr, agreed->worker_master_port,
                                        "127.0.0.1", 0);
        if (!started) return started.error();
        relay = std::move(*started);
        round_inputs.worker_master_addr = "127.0.0.1";
        round_inputs.worker_master_port = relay->port();
      }
      // One write, so that the lines of launchers sharing a console do not mix. Per process,
      // rank 0's alone: a thousand ranks on one srun console would say it a thousand times.
      const bool per_process = plan.topology.launch == Launch::per_process;
      std::string joined =
          (per_process ? "aml-launch: rank 0 (node " + std::to_string(node.node_rank) + ", " +
                             node.host + "): the launchers of all " +
                             std::to_string(agreed->node_count) + " ranks joined "
                       : "aml-launch: node " + std::to_string(node.node_rank) + " (" + node.host +
                             "): all " + std::to_string(agreed->node_count) + " nodes joined ") +
          phase + " round " + std::to_string(restart_count) +
          ", MASTER_PORT for the workers: " + std::to_string(agreed->worker_master_port) +
          (relay ? " (this node's workers reach it through this launcher's relay, at "
                   "MASTER_ADDR 127.0.0.1, MASTER_PORT " +
                       std::to_string(relay->port()) +
                       ", and node 0's address in "
                       "AML_LAUNCH_NODE0_ADDR: " +
                       *agreed->relay + ")"
           : agreed->relay && node.node_rank == 0
               ? " (the other nodes' workers reach it through their own launcher's relay: " +
                     *agreed->relay + ")"
               : "") +
          (round_inputs.jax
               ? "; jax: process 0's coordinator at " + round_inputs.jax->coordinator_host + ":" +
                     std::to_string(round_inputs.jax->coordinator_port) + " (listening on " +
                     round_inputs.jax->bind_host + ")"
               : "") +
          "\n";
      if (!per_process || group->member() == 0) say_after_workers(options, joined);
    }
    if (!group && plan.worker_store.by_launcher) {
      local_stores = {};  // the last round's, with their keys
      auto served = serve_local_worker_stores(plan.topology, *inputs);
      if (!served) return served.error();
      local_stores = std::move(*served);
    }
    round_inputs.restart_count = launch.restarts_used;
    LaunchPlan round =
        restart_count == 0 && !group ? plan : build_plan(round_topology, round_inputs);
    for (const WorkerPlan& worker : round.workers) {
      launch.workers.push_back({worker.rank, worker.local_rank, command,
                                environ_with(env, worker.env), !round_inputs.python_unbuffered_set,
                                worker_binding(worker.placement)});
    }
    return launch;
  };
  if (options.preflight) {
    if (int status = run_preflight(
            options, plan, env, node, group.get(), round_of,
            [&local_stores] { return local_stores.on_first_use(); },
            [&options](const std::string& text, bool stop_requested) {
              say_after_workers(options, text, stop_requested);
            });
        status != 0)
      return status;
  }
  auto launches = [&](int restart_count) {
    return round_of("run", options.command, restart_count);
  };
  auto on_restart = [&](const RunOutcome& failed, int next) {
    rounds.ended(failed);
    restart_events(events, failed, node, next, options.max_restarts);
    std::string said = write_summary_file(options, failed, node, false, rounds, (*watch)->clock);
    const bool regroup = failed.remote_failure && failed.remote_failure->regroup;
    say_after_workers(options, said + failure_summary_text(failed, node) +
                                   (regroup ? ""
                                            : "aml-launch: restarting the workers (restart " +
                                                  std::to_string(next) + " of " +
                                                  std::to_string(options.max_restarts) + ")\n"));
  };
  RunOptions run_options;
  run_options.term_timeout_seconds = options.term_timeout_seconds;
  run_options.max_restarts = options.max_restarts;
  run_options.output = output_options(options, plan, env);
  run_options.peers = group.get();
  run_options.hang_timeout_seconds = options.hang_timeout_seconds;
  run_options.hang_startup_timeout_seconds = options.hang_startup_timeout_seconds;
  run_options.straggler_check_seconds = options.straggler_check_seconds;
  run_options.straggler_share = options.straggler_share;
  run_options.bench_stragglers = options.bench_stragglers;
  run_options.node_rank = plan.topology.node_rank;
  run_options.report_at_once = [&node](const RunOutcome& so_far) {
    return late_stop_text(so_far, node);
  };
  const std::string made_for_hangs =
      prepare_hang_files(options, env, inputs->hang_env, plan.run_id, run_options);
  NoticeDesk desk(*notices, [](const std::string& line) {
    const std::string text = "aml-launch: " + line + "\n";
    (void)!write(STDERR_FILENO, text.data(), text.size());
  });
  run_options.notices = &desk;
  run_options.guardian_loss_is_node_loss = group && plan.topology.elastic;
  run_options.on_first_use = [&local_stores, &watch] {
    auto uses = local_stores.on_first_use();
    if (MetricsServer* metrics = (*watch)->server.get(); metrics && !metrics->serving())
      uses.push_back({metrics->listen_fd(), [metrics] { metrics->serve(); }});
    return uses;
  };
  run_options.events = events;
  RunOutcome outcome = run_workers(launches, run_options, on_restart);
  remove_if_empty(made_for_hangs);
  if (!notices->file.empty()) unlink(notices->file.c_str());
  // The file first: a stderr that nobody reads cannot keep it from being written.
  rounds.ended(outcome);
  end_events(events, outcome, node);
  std::string said = write_summary_file(options, outcome, node, true, rounds, (*watch)->clock);
  std::string verdict;
  if (outcome.start_error)
    verdict += "aml-launch: cannot start: " + outcome.start_error->message() + "\n";
  verdict += failure_summary_text(outcome, node);
  // The verdict last: a scheduler's log view shows the tail, and it should end with the reason.
  said +=
      time_text(said + verdict, outcome, (*watch)->clock) + bench_text(rounds.bench()) + verdict;
  if (run_options.guardian_loss_is_node_loss && outcome.stopped &&
      outcome.stopped->guardian_killed) {
    // Gone as a lost node: no word to the others, no will taken back (its connections close
    // now, and the next round runs with the survivors and a spare).
    say_after_workers(options, said, true);
    _exit(128 + SIGKILL);
  }
  if (group) group->end_of_job(outcome.exit_code, said, told_end(outcome, node));
  if (!said.empty()) say_after_workers(options, said, outcome.stop_requested);
  return outcome.exit_code;
}

}  // namespace
}  // namespace aml

int main(int argc, char** argv) {
  // `aml-launch report ...`: a program named report runs as `aml-launch -- report`.
  if (argc >= 2 && std::string_view(argv[1]) == "report")
    return aml::run_report(argc - 2, argv + 2);
  return aml::run(argc, argv);
}
