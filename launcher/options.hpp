// What the command line asked for.
#pragma once

#include <aml/error.hpp>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "placement/placement.hpp"
#include "topology/source.hpp"

namespace aml {

enum class OutputFormat { text, json };
enum class Framework { pytorch, tensorflow };

struct Options {
  Overrides overrides;
  bool dry_run = false;
  OutputFormat format = OutputFormat::text;
  std::string run_id;
  std::string rdzv_id;           // the job's token at the rendezvous (default: the run id)
  std::string rdzv_secret_file;  // the job's secret (also AML_LAUNCH_SECRET_FILE)
  bool require_auth = false;     // no store without authentication (also AML_LAUNCH_REQUIRE_AUTH)
  std::string rdzv_backend;      // --rdzv-backend as given ("": PET_RDZV_BACKEND, else c10d)
  std::vector<std::string> etcd_endpoints;  // --rdzv-endpoint under --rdzv-backend etcd
  bool etcd_https = false;                  // ... given as https://
  std::string rdzv_conf;                    // --rdzv-conf as given ("": PET_RDZV_CONF)
  double rdzv_timeout_seconds = 600;
  // A node silent this long is lost: above Azure's 30 s memory-preserving VM pauses.
  double node_timeout_seconds = 60;
  double hang_timeout_seconds = 0;  // 0: off
  double hang_startup_timeout_seconds = 1800;
  double term_timeout_seconds = 30;
  int max_restarts = 0;
  double rdzv_last_call_seconds = 3;  // elastic: a round starts this long after the last arrival
  bool admit_at_once = false;         // elastic: a newcomer ends a round below MAX nodes
  std::optional<std::string> tag;     // --tag: a template, "none", or unset for the default
  std::optional<std::set<int>> local_ranks_filter;
  std::optional<std::string> log_dir;  // unset: the default (Azure ML's user_logs, else none)
  std::string summary_file;
  bool exec = false;
  bool no_group = false;  // per-process: each rank's launcher alone (no store, no fail-fast)
  std::optional<std::string> preflight;  // --preflight[=backend]: gloo, mpi or nccl
  double preflight_min_busbw = 0;        // GB/s; 0: no floor
  Framework framework = Framework::pytorch;
  BindMode bind = BindMode::automatic;                   // --bind (or AML_LAUNCH_BIND)
  MemoryPolicy memory_policy = MemoryPolicy::preferred;  // --mem-policy
  std::vector<std::string> command;
};

// --help and --version print and end the program with status 0.
struct ExitNow {
  int status;
};

// Options, an early exit (help, version), or the flag that was wrong.
std::variant<Options, ExitNow, Error> parse_command_line(int argc, char** argv);

}  // namespace aml
