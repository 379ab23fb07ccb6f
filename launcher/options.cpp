#include "options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "artifact.hpp"
#include "help_text.hpp"
#include "topology/host_port.hpp"
#include "topology/master.hpp"
#include "topology/numbers.hpp"
#include "topology/rdzv_backend.hpp"

namespace aml {
namespace {

// Flags are taken as text and read with the same number rules as the environment, so that an
// error names the flag and its value the same way.
struct RawFlags {
  std::string nnodes, node_rank, nproc_per_node, master_addr, master_port, format = "text";
  std::string term_timeout, max_restarts, local_ranks_filter, framework = "pytorch";
  std::string rdzv_timeout, node_timeout, preflight_min_busbw, hang_timeout, hang_startup_timeout;
  std::string rdzv_endpoint, rdzv_backend, rdzv_last_call, admit_newcomers;
  std::string bind, mem_policy = "preferred";
};

Result<std::set<int>> parse_rank_list(const std::string& text) {
  std::set<int> ranks;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    auto rank =
        parse_number("--local-ranks-filter", text.substr(start, comma - start), 0, kMaxCount);
    if (!rank) return invalid("--local-ranks-filter", text, "local ranks such as 0 or 0,2,3");
    ranks.insert(*rank);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ranks;
}

Result<std::optional<int>> flag_number(const std::string& flag, const std::string& text, int min) {
  if (text.empty()) return std::optional<int>();
  auto value = parse_number(flag, text, min, kMaxCount);
  if (!value) return value.error();
  return std::optional<int>(*value);
}

// A decimal number in [low, high] (above low when low is exclusive); the error says `expected`.
Result<double> flag_decimal(const std::string& flag, const std::string& text, double low,
                            bool low_exclusive, double high, const std::string& expected) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  bool in_range = low_exclusive ? value > low : value >= low;  // false for NaN too
  if (end == text.c_str() || *end != '\0' || !in_range || value > high) {
    return invalid(flag, text, expected);
  }
  return value;
}

// --nnodes N or MIN:MAX, the rendezvous flags torchrun spells the same way, and the restart
// budget (torchrun's PET_MAX_RESTARTS, as a Kubeflow elasticPolicy sets it, when not given).
std::optional<Error> finish_rendezvous(const RawFlags& raw, Options& options) {
  if (!raw.nnodes.empty()) {
    auto range = parse_node_range("--nnodes", raw.nnodes);
    if (!range) return range.error();
    if (raw.nnodes.find(':') == std::string::npos) {
      options.overrides.nnodes = range->min;
    } else {
      options.overrides.nnodes_range = *range;
    }
  }
  auto on_etcd = is_etcd_backend("--rdzv-backend", raw.rdzv_backend);
  if (!on_etcd) return on_etcd.error();
  options.rdzv_backend = raw.rdzv_backend;
  if (*on_etcd && raw.rdzv_endpoint.empty() && std::getenv("PET_RDZV_ENDPOINT") == nullptr) {
    return missing("--rdzv-endpoint",
                   "etcd's members, HOST[:PORT],HOST[:PORT],... (--rdzv-backend " +
                       raw.rdzv_backend + " keeps the rendezvous there)");
  }
  if (!raw.rdzv_endpoint.empty() && *on_etcd) {
    auto members = etcd_endpoints("--rdzv-endpoint", raw.rdzv_endpoint);
    if (!members) return members.error();
    options.etcd_endpoints = *members;
    auto https = etcd_endpoints_use_tls("--rdzv-endpoint", raw.rdzv_endpoint);
    if (!https) return https.error();
    options.etcd_https = *https;
    // The launchers' way out is found by the route to etcd; the workers' MASTER_ADDR is each
    // round's node 0.
    auto first = split_host_port("--rdzv-endpoint", members->front());
    if (!first) return first.error();
    options.overrides.master_addr = first->host;
    options.overrides.master_port = first->port.value_or(kEtcdDefaultPort);
  } else if (!raw.rdzv_endpoint.empty()) {
    auto endpoint = split_host_port("--rdzv-endpoint", raw.rdzv_endpoint);
    if (!endpoint || endpoint->host.empty()) {
      return invalid("--rdzv-endpoint", raw.rdzv_endpoint, "HOST or HOST:PORT");
    }
    options.overrides.master_addr = endpoint->host;
    options.overrides.master_port = endpoint->port.value_or(kRendezvousDefaultPort);
  }
  if (!raw.rdzv_last_call.empty()) {
    auto seconds = flag_decimal("--rdzv-last-call", raw.rdzv_last_call, 0, false, 86400,
                                "seconds from 0 to 86400");
    if (!seconds) return seconds.error();
    options.rdzv_last_call_seconds = *seconds;
  }
  if (raw.admit_newcomers == "at-once") {
    options.admit_at_once = true;
  } else if (!raw.admit_newcomers.empty() && raw.admit_newcomers != "next-round") {
    return invalid("--admit-newcomers", raw.admit_newcomers, "next-round or at-once");
  }
  std::string restarts_flag = "--max-restarts";
  std::string restarts = raw.max_restarts;
  if (restarts.empty() && std::getenv("PET_MAX_RESTARTS") != nullptr) {
    restarts = std::getenv("PET_MAX_RESTARTS");
    restarts_flag = "PET_MAX_RESTARTS";
  }
  if (!restarts.empty()) {
    auto count = parse_number(restarts_flag, restarts, 0, 1000000);
    if (!count) return count.error();
    options.max_restarts = *count;
  }
  return std::nullopt;
}

std::optional<Error> finish(const RawFlags& raw, Options& options) {
  if (auto error = finish_rendezvous(raw, options)) return error;
  auto node_rank = flag_number("--node-rank", raw.node_rank, 0);
  if (!node_rank) return node_rank.error();
  options.overrides.node_rank = *node_rank;
  if (!raw.nproc_per_node.empty() && raw.nproc_per_node != "auto") {
    auto nproc = parse_number("--nproc-per-node", raw.nproc_per_node, 1, kMaxCount);
    if (!nproc)
      return invalid("--nproc-per-node", raw.nproc_per_node, "auto or a whole number >= 1");
    options.overrides.nproc_per_node = *nproc;
  }
  if (!raw.master_port.empty()) {
    auto port = parse_port("--master-port", raw.master_port);
    if (!port) return port.error();
    options.overrides.master_port = *port;
  }
  if (!raw.master_addr.empty()) options.overrides.master_addr = raw.master_addr;
  if (raw.format == "json") {
    options.format = OutputFormat::json;
  } else if (raw.format != "text") {
    return invalid("--format", raw.format, "json or text");
  }
  if (!raw.term_timeout.empty()) {
    auto seconds = flag_decimal("--term-timeout", raw.term_timeout, 0, false, 86400,
                                "seconds from 0 to 86400");
    if (!seconds) return seconds.error();
    options.term_timeout_seconds = *seconds;
  }
  // Unless given, a cluster's images may set it for every job.
  const char* bind_variable = std::getenv("AML_LAUNCH_BIND");
  const bool bind_from_env = raw.bind.empty() && bind_variable != nullptr && *bind_variable != 0;
  const std::string bind = bind_from_env ? bind_variable : raw.bind.empty() ? "auto" : raw.bind;
  if (auto mode = bind_mode_from(bind)) {
    options.bind = *mode;
  } else {
    return invalid(bind_from_env ? "AML_LAUNCH_BIND" : "--bind", bind,
                   "none, node, socket, exclusive, core-complex or auto");
  }
  if (auto policy = memory_policy_from(raw.mem_policy)) {
    options.memory_policy = *policy;
  } else {
    return invalid("--mem-policy", raw.mem_policy, "preferred, bind or none");
  }
  if (options.preflight) {
    if (options.preflight->empty()) options.preflight = "gloo";
    if (*options.preflight != "gloo" && *options.preflight != "mpi" && *options.preflight != "nccl")
      return invalid("--preflight", *options.preflight, "gloo, mpi or nccl");
  }
  if (!raw.preflight_min_busbw.empty()) {
    auto gbps = flag_decimal("--preflight-min-busbw", raw.preflight_min_busbw, 0, true, 1e9,
                             "GB/s above 0");
    if (!gbps) return gbps.error();
    if (!options.preflight) options.preflight = "gloo";
    options.preflight_min_busbw = *gbps;
  }
  if (!raw.rdzv_timeout.empty()) {
    auto seconds = flag_decimal("--rdzv-timeout", raw.rdzv_timeout, 0, true, 604800,
                                "seconds, above 0 and up to 604800");
    if (!seconds) return seconds.error();
    options.rdzv_timeout_seconds = *seconds;
  }
  if (!raw.node_timeout.empty()) {
    auto seconds = flag_decimal("--node-timeout", raw.node_timeout, 0, true, 86400,
                                "seconds, above 0 and up to 86400");
    if (!seconds) return seconds.error();
    options.node_timeout_seconds = *seconds;
  }
  // Off unless given, or set for a whole cluster's jobs in the environment.
  std::string hang_flag = "--hang-timeout";
  std::string hang = raw.hang_timeout;
  if (hang.empty() && std::getenv("AML_LAUNCH_HANG_TIMEOUT") != nullptr) {
    hang = std::getenv("AML_LAUNCH_HANG_TIMEOUT");
    hang_flag = "AML_LAUNCH_HANG_TIMEOUT";
  }
  if (!hang.empty() && hang != "off" && hang != "0") {
    auto seconds =
        flag_decimal(hang_flag, hang, 0, true, 604800, "seconds, above 0 and up to 604800, or off");
    if (!seconds) return seconds.error();
    options.hang_timeout_seconds = *seconds;
  }
  if (!raw.hang_startup_timeout.empty()) {
    auto seconds = flag_decimal("--hang-startup-timeout", raw.hang_startup_timeout, 0, true, 604800,
                                "seconds, above 0 and up to 604800");
    if (!seconds) return seconds.error();
    options.hang_startup_timeout_seconds = *seconds;
  } else {
    // Loading a large checkpoint from blob storage on every node, compiling kernels, the
    // first meeting of thousands of ranks: tens of minutes, silent, and healthy.
    options.hang_startup_timeout_seconds = std::max(1800.0, 10 * options.hang_timeout_seconds);
  }
  if (!raw.local_ranks_filter.empty()) {
    auto ranks = parse_rank_list(raw.local_ranks_filter);
    if (!ranks) return ranks.error();
    options.local_ranks_filter = *ranks;
  }
  if (raw.framework == "tensorflow") {
    options.framework = Framework::tensorflow;
  } else if (raw.framework != "pytorch") {
    return invalid("--framework", raw.framework, "pytorch or tensorflow");
  }
  return std::nullopt;
}

}  // namespace

std::variant<Options, ExitNow, Error> parse_command_line(int argc, char** argv) {
  Options options;
  RawFlags raw;
  CLI::App app{
      "aml-launch: work out RANK, WORLD_SIZE, MASTER_ADDR ... from whatever the scheduler set,\n"
      "then start and supervise the workers of a distributed training job.\n\n"
      "usage: aml-launch [OPTIONS] -- COMMAND [ARGS...]\n"
      "       aml-launch --dry-run --format json [OPTIONS] [-- COMMAND ...]\n",
      "aml-launch"};
  app.set_version_flag("--version", version_text);
  app.add_option("--nnodes", raw.nnodes,
                 "Number of nodes (overrides the scheduler's), or MIN:MAX for an elastic job: "
                 "no node has a fixed rank, rounds start with MAX nodes (or MIN after "
                 "--rdzv-last-call), nodes beyond MAX wait as hot spares, and a lost node is "
                 "replaced by a spare in a new round (see README, Elastic jobs)");
  app.add_option("--node-rank", raw.node_rank,
                 "This node's index, 0-based (overrides the scheduler's)");
  app.add_option("--nproc-per-node", raw.nproc_per_node,
                 "Workers to spawn on this node: N or auto (the visible GPUs, else 1)");
  app.add_option("--master-addr", raw.master_addr,
                 "Address of node 0 (overrides MASTER_ADDR and the like)");
  app.add_option("--master-port", raw.master_port, "The job's rendezvous port on node 0");
  app.add_option("--run-id", options.run_id,
                 "Run id given to the workers (default: the scheduler's)");
  app.add_option("--rdzv-id", options.rdzv_id,
                 "Multi-node: the token every node presents to node 0's store (default: the "
                 "run id: AZUREML_RUN_ID, SLURM_JOB_ID, ..., else MASTER_ADDR:MASTER_PORT)");
  app.add_option("--rdzv-secret-file", options.rdzv_secret_file,
                 "Multi-node: a file holding the job's secret (at least 16 bytes), the same on "
                 "every node: only launchers and workers that prove they know it (a mutual "
                 "challenge-response; the secret never crosses the wire) reach node 0's store. "
                 "Also AML_LAUNCH_SECRET_FILE, or the secret itself in AML_LAUNCH_SECRET; under "
                 "Slurm with munge, munge credentials need nothing. See README, Security");
  app.add_flag("--require-auth", options.require_auth,
               "Multi-node: refuse to run without a job secret or munge (also "
               "AML_LAUNCH_REQUIRE_AUTH=1)");
  app.add_option("--rdzv-endpoint", raw.rdzv_endpoint,
                 "HOST[:PORT] of the rendezvous store (torchrun's spelling; default port 29400): "
                 "the node at HOST serves it and is node 0 (same as --master-addr/--master-port). "
                 "Under --rdzv-backend etcd: etcd's members, HOST[:PORT],HOST[:PORT],... (default "
                 "port 2379)");
  app.add_option(
      "--rdzv-backend", raw.rdzv_backend,
      "Where the job's rendezvous is kept: c10d or static (the default: node 0's store; "
      "node 0 lost, an elastic job's others wait --rdzv-timeout for it to come back), or etcd / "
      "etcd-v3 (an etcd cluster, its v3 API: "
      "any node may be lost, node 0 included). Also Kubeflow's PET_RDZV_BACKEND");
  app.add_option("--rdzv-conf", options.rdzv_conf,
                 "Under --rdzv-backend etcd, how to reach a guarded etcd, as torchrun spells it: "
                 "KEY=VALUE,... with protocol=https, cacert=CA.pem, cert=CLIENT.pem, "
                 "key=CLIENT.key (TLS; OpenSSL's libssl is opened at run time), user=NAME, "
                 "password_file=FILE (etcd's authentication; or the password in "
                 "AML_LAUNCH_ETCD_PASSWORD, never on the command line), transport=grpc|gateway "
                 "(etcd's gRPC API through a libnghttp2 opened at run time, or its JSON gateway; "
                 "default: gRPC where libnghttp2 opens). Also PET_RDZV_CONF");
  app.add_option("--rdzv-last-call", raw.rdzv_last_call,
                 "Elastic: once MIN nodes have joined, start the round when no other node came "
                 "for this many seconds (default 3). Shorter starts sooner; a node that comes "
                 "later waits as a spare for the next round");
  app.add_option("--admit-newcomers", raw.admit_newcomers,
                 "Elastic: a node that arrives while a round runs with fewer than MAX nodes "
                 "joins at the next round (next-round, the default: a running round is never "
                 "stopped to grow it) or ends the round at once to join (at-once, as torchrun)");
  app.add_option("--rdzv-timeout", raw.rdzv_timeout,
                 "Multi-node: seconds to wait for every node to join (default 600)");
  app.add_option("--node-timeout", raw.node_timeout,
                 "Multi-node: seconds a node may be silent (a paused VM, a starved host) before "
                 "the job counts it lost (default 60: Azure pauses VMs for up to 30 s for host "
                 "maintenance); a launcher that dies is noticed at once, whatever this is (under "
                 "etcd this is also each launcher's lease: a host gone whole is lost when it "
                 "ends)");
  app.add_option("--hang-timeout", raw.hang_timeout,
                 "Seconds without progress anywhere (no rank wrote output or called "
                 "aml_launch.progress()) after which the job counts as hung: every rank is "
                 "looked at (/proc, py-spy, faulthandler, gdb), the rank that is not where the "
                 "others wait is named, and the job stops as a failure (exit 124). A rank that "
                 "moves while it is looked at (output, progress, a changed stack, CPU used "
                 "between two looks) calls that off and the job goes on. Off by default, or "
                 "AML_LAUNCH_HANG_TIMEOUT");
  app.add_option("--hang-startup-timeout", raw.hang_startup_timeout,
                 "With --hang-timeout: seconds a rank may stay silent from its start until its "
                 "first output or progress (imports, loading a checkpoint, the first meeting of "
                 "the ranks are not a hang); default the larger of 1800 and 10 x "
                 "--hang-timeout. A rank that never prints counts as started once the job has "
                 "shown progress for --hang-timeout");
  app.add_option("--term-timeout", raw.term_timeout,
                 "Seconds between SIGTERM and SIGKILL when the workers are stopped (default 30)");
  app.add_option("--max-restarts", raw.max_restarts,
                 "Restart the workers (of every node) this many times after a failure or a lost "
                 "node (default 0, or PET_MAX_RESTARTS)");
  app.add_option(
      "--log-dir", options.log_dir,
      "Write each rank's output to DIR/std_log_process_<rank>.txt (in Azure ML: user_logs); "
      "{rank}, {local_rank}, {node_rank} in DIR are this launcher's (per node: rank = node rank)");
  app.add_option("--tag", options.tag,
                 "Prefix of each console line: a template with {rank} and {local_rank}, or none "
                 "(default \"[rank {rank}] \" when there is more than one local worker)");
  app.add_option("--local-ranks-filter", raw.local_ranks_filter,
                 "Show only these local ranks on the console, e.g. 0 or 0,3 (log files get all)");
  app.add_option("--summary-file", options.summary_file,
                 "Write the run's outcome as JSON: first failure (rank, node, pid, code or signal, "
                 "time, stderr tail) and every worker's exit; also before each restart, with "
                 "\"final\": false. {rank}, {local_rank}, {node_rank} in F are this launcher's "
                 "(one file per task of one srun line)");
  app.add_flag("--no-group", options.no_group,
               "Per-process launch: do not meet the other ranks' launchers; each supervises its "
               "own rank alone, and a failure elsewhere does not stop it (the workers keep the "
               "scheduler's MASTER_PORT)");
  app.add_flag("--exec", options.exec,
               "Per-process launch: replace aml-launch by the command (no supervision)");
  app.add_option("--framework", raw.framework,
                 "pytorch (default) or tensorflow: also give each worker a TF_CONFIG");
  app.add_option("--preflight", options.preflight,
                 "Before the command, every rank joins a communicator (gloo, the default, mpi or "
                 "nccl) and checks allreduce from 8 B to 64 MiB; a failure stops the job")
      ->expected(0, 1);
  app.add_option("--preflight-min-busbw", raw.preflight_min_busbw,
                 "Fail the preflight when the 64 MiB allreduce's bus bandwidth is below GBPS");
  app.add_option("--bind,--numa-binding", raw.bind,
                 "Where each local rank runs: node (the CPUs of its GPU's NUMA node), socket, "
                 "exclusive (a disjoint share of those CPUs, whole cores), core-complex (one L3 "
                 "group there), none, or auto (the default: node where the launcher has the "
                 "whole node, a GPU per rank and 2 or more NUMA nodes; none elsewhere, where "
                 "binding could hurt). Its GPU: its CUDA_VISIBLE_DEVICES entry, else its local "
                 "rank. Never outside the CPUs the launcher was given; a task the scheduler "
                 "bound is left alone; AML_LAUNCH_BIND sets the default; --numa-binding is "
                 "torchrun's spelling");
  app.add_option("--mem-policy", raw.mem_policy,
                 "With --bind, the workers' memory: preferred (the default: on their NUMA node "
                 "first, elsewhere once it is full), bind (only there: an allocation that does "
                 "not fit fails), none");
  app.add_flag("--dry-run", options.dry_run, "Print the launch plan and start nothing");
  app.add_option("--format", raw.format, "Output of --dry-run: text (default) or json");
  app.footer(kHelpFooter);
  app.prefix_command();  // everything from the first non-option (or after --) is the command

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return ExitNow{0};
  } catch (const CLI::CallForVersion&) {
    std::cout << app.version() << "\n";
    return ExitNow{0};
  } catch (const CLI::ParseError& e) {
    return invalid("command line", e.get_name(), std::string(e.what()) + "; see --help");
  }
  options.command = app.remaining();
  if (!options.command.empty() && options.command.front() == "--") {
    options.command.erase(options.command.begin());
  } else if (!options.command.empty() && options.command.front().starts_with("-")) {
    return invalid("command line", options.command.front(),
                   "a known option (see --help), or -- before the command");
  }
  if (auto error = finish(raw, options)) return *error;
  return options;
}

}  // namespace aml
