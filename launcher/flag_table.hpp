// Every flag of aml-launch, said once: its spellings (torchrun's among them), what it takes,
// the variable that gives it, its default and its help. The parser, --help, the bash
// completion, the man page and the docs' reference are all made from this table.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace aml {

enum class FlagId : std::uint8_t {
  // The job's shape.
  nnodes,
  node_rank,
  nproc_per_node,
  master_addr,
  master_port,
  standalone,
  // The command.
  module,
  no_python,
  run_path,
  // The rendezvous of several nodes.
  rdzv_backend,
  rdzv_endpoint,
  rdzv_id,
  rdzv_conf,
  rdzv_timeout,
  node_timeout,
  rdzv_last_call,
  admit_newcomers,
  run_id,
  no_group,
  worker_store,
  local_addr,
  // Security.
  rdzv_secret_file,
  require_auth,
  // Supervision and output.
  max_restarts,
  term_timeout,
  log_dir,
  tag,
  log_line_prefix_template,
  local_ranks_filter,
  redirects,
  tee,
  duplicate_stdout_filters,
  duplicate_stderr_filters,
  summary_file,
  events_file,
  job_events_file,
  metrics_port,
  exec,
  virtual_local_rank,
  role,
  framework,
  // Hangs.
  hang_timeout,
  hang_startup_timeout,
  straggler_check,
  straggler_share,
  bench_stragglers,
  // Notices of a node's end (preemption, maintenance).
  notice_from,
  notice_signal,
  notice_to_workers,
  // Placement.
  bind,
  mem_policy,
  // Preflight.
  preflight,
  preflight_min_busbw,
  // Node health and the bench.
  health_checks,
  health_path,
  health_command,
  health_timeout,
  bench_after,
  bad_nodes_file,
  // The plan.
  dry_run,
  format,
  // torchrun's flags that have no use here.
  monitor_interval,
  start_method,
  event_log_handler,
  logs_specs,
  signals_to_handle,
  // The program itself.
  help,
  version,
  print_completion,
};
inline constexpr int kFlagCount = static_cast<int>(FlagId::print_completion) + 1;

enum class Takes : std::uint8_t {
  nothing,         // a switch
  value,           // --flag VALUE or --flag=VALUE
  optional_value,  // --flag, or --flag=VALUE
};

// How a flag of torchrun's name behaves here.
enum class Torchrun : std::uint8_t {
  none,     // aml-launch's own: torchrun has no such flag
  same,     // torchrun's flag, and it does what torchrun does
  differs,  // torchrun's flag; what differs is said once when it is given (note)
  // aml-launch's own flag under torchrun's name; what differs from torchrun's is said once
  // when it is given in torchrun's underscore spelling (an aml-launch user knows it already)
  ours_differs,
  no_use,  // torchrun's flag with nothing to do here; said once when it is given (note)
};

struct FlagSpec {
  FlagId id;
  std::string_view names;  // every spelling, space-separated; --help shows the first
  Takes takes;
  std::string_view shape;      // the value as --help shows it ("N|auto")
  std::string_view variable;   // the environment variable that gives it when the flag is absent
  bool parser_reads_variable;  // false: the variable is read where the topology is detected
  std::string_view fallback;   // its default, in words ("" none)
  std::string_view help;
  Torchrun torchrun;
  std::string_view note;       // differs / no_use: what aml-launch does with it
  std::string_view completes;  // completion of its value: words, "<file>", "<dir>", "" nothing
};

// The whole table, in --help's order.
std::span<const FlagSpec> all_flags();

const FlagSpec& flag_spec(FlagId id);

// The flag one of these spellings names ("--nproc_per_node", "-m"), or nullptr.
const FlagSpec* find_flag(std::string_view spelling);

// The first spelling (the one --help and errors use).
std::string_view main_name(const FlagSpec& spec);

}  // namespace aml
