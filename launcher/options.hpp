// What the command line asked for.
#pragma once

#include <aml/error.hpp>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "command_line.hpp"
#include "health/health_checks.hpp"
#include "placement/placement.hpp"
#include "topology/source.hpp"

namespace aml {

enum class OutputFormat { text, json };
enum class Framework { pytorch, tensorflow, jax };

// How the program after the flags is run (torchrun's rules: program_command.hpp).
struct ProgramOptions {
  std::vector<std::string> words;  // the program and its arguments, as given
  bool after_dashes = false;       // given after --: run as it is
  bool module = false;             // -m: a Python module
  bool no_python = false;          // --no-python: as it is, even a .py file
};

struct Options {
  Overrides overrides;
  bool standalone = false;  // --standalone: one node here, whatever the scheduler set
  std::string nproc_word;   // --nproc-per-node auto, gpu or cpu, counted into the overrides
  bool dry_run = false;
  OutputFormat format = OutputFormat::text;
  std::string run_id;
  std::string rdzv_id;           // the job's token at the rendezvous (default: the run id)
  std::string rdzv_secret_file;  // the job's secret (also AML_LAUNCH_SECRET_FILE)
  bool require_auth = false;     // no store without authentication (also AML_LAUNCH_REQUIRE_AUTH)
  std::string rdzv_backend;      // --rdzv-backend as given ("": PET_RDZV_BACKEND, else c10d)
  std::vector<std::string> etcd_endpoints;  // --rdzv-endpoint under --rdzv-backend etcd
  bool etcd_https = false;                  // ... given as https://
  std::string rdzv_conf;  // --rdzv-conf's keys for etcd's access ("": PET_RDZV_CONF's)
  double rdzv_timeout_seconds = 600;
  // A node silent this long is lost: above Azure's 30 s memory-preserving VM pauses.
  double node_timeout_seconds = 60;
  double hang_timeout_seconds = 0;  // 0: off
  double hang_startup_timeout_seconds = 1800;
  double straggler_check_seconds = 0;  // 0: off
  double straggler_share = 0.2;
  bool bench_stragglers = false;
  // Notices of this node's end (--notice-from, --notice-signal, --notice-to-workers).
  std::string notice_from = "auto";  // auto, none, or a list of azure, aws, gcp
  int notice_signal = 0;             // 0: none
  int notice_to_workers = 10;        // SIGUSR1; 0: none
  // Inside the 30 s that Kubernetes (terminationGracePeriodSeconds) and Slurm (KillWait) give
  // between their SIGTERM and SIGKILL, with time left for the report.
  double term_timeout_seconds = 25;
  int max_restarts = 0;
  double rdzv_last_call_seconds = 3;  // elastic: a round starts this long after the last arrival
  bool admit_at_once = false;         // elastic: a newcomer ends a round below MAX nodes
  std::optional<std::string> tag;     // --tag: a template, "none", or unset for the default
  std::optional<std::set<int>> local_ranks_filter;
  std::optional<std::string> log_dir;  // unset: the default (Azure ML's user_logs, else none)
  std::string summary_file;
  std::optional<std::string> events_file;  // --events-file ("none": none); unset: by --log-dir
  std::string job_events_file;             // --job-events-file: node 0's; "": none
  std::string metrics_port;                // --metrics-port: "[ADDR:]PORT"; "": none
  bool exec = false;
  bool no_group = false;  // per-process: each rank's launcher alone (no store, no fail-fast)
  bool torch_hosts_worker_store = false;  // --worker-store torch: rank 0's worker serves it
  bool relay_worker_store = false;
  // torchrun's ${rank} ${local_rank} ${role_name} ${hostname} template of a console line.
  std::optional<std::string>
      log_line_prefix_template;     // --worker-store relay: each node's workers through its relay
  bool virtual_local_rank = false;  // each worker sees its GPU alone, as device 0
  std::optional<std::string> role;  // --role: the workers' ROLE_NAME
  std::optional<std::string> preflight;  // --preflight[=backend]: gloo, mpi or nccl
  double preflight_min_busbw = 0;        // GB/s; 0: no floor
  Framework framework = Framework::pytorch;
  bool framework_given = false;  // --framework on the command line (else a default may apply)
  BindMode bind = BindMode::automatic;                   // --bind (or AML_LAUNCH_BIND)
  MemoryPolicy memory_policy = MemoryPolicy::preferred;  // --mem-policy
  HealthSettings health;       // --health-checks and the rest (options_health.cpp)
  int bench_after = 2;         // elastic: a node whose rank failed first this many rounds
  std::string bad_nodes_file;  // --bad-nodes-file: a JSON line a benched node
  ProgramOptions program;
  std::vector<std::string> command;  // what each worker runs (program_command.hpp)
  std::string program_interpreter;   // ... the Python it runs under, if any
  std::string program_about;         // ... how it runs, and why
  // torchrun's flags given that do something else here, or nothing: one line each, said once.
  std::vector<std::string> torchrun_notes;
};

// --help and --version print and end the program with status 0.
struct ExitNow {
  int status;
};

// Options, an early exit (help, version), or the flag that was wrong.
std::variant<Options, ExitNow, Error> parse_command_line(int argc, char** argv);

// The rendezvous flags of a command line (options_rendezvous.cpp).
std::optional<Error> read_rendezvous_flags(const CommandLine& line, Options& options);
// --notice-from, --notice-signal, --notice-to-workers (options_notices.cpp).
std::optional<Error> read_notice_flags(const CommandLine& line, Options& options);
// --health-checks and the bench's flags (options_health.cpp).
std::optional<Error> read_health_flags(const CommandLine& line, Options& options);
// What the environment says of the checks: the machine root (tests), CUDA_VISIBLE_DEVICES,
// NCCL_IB_HCA.
void health_from_environment(HealthSettings& health, const Env& env);
// The scheduler's name for this machine (AML_LAUNCH_NODE_NAME, SLURMD_NODENAME, Kubernetes'
// NODE_NAME, AZ_BATCH_NODE_ID), or "".
std::string machine_name(const Env& env);

// The name to put in an error about a flag: as it was spelled, or the variable that gave it.
std::string flag_name(const CommandLine& line, FlagId id);

// A decimal number of seconds (or other unit) in [low, high]; low may be exclusive.
Result<double> flag_decimal(const std::string& flag, const std::string& text, double low,
                            bool low_exclusive, double high, const std::string& expected);

}  // namespace aml
