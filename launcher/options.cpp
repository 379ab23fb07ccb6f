#include "options.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "artifact.hpp"
#include "completion.hpp"
#include "help_text.hpp"
#include "topology/numbers.hpp"

namespace aml {
namespace {

using enum FlagId;

Result<std::set<int>> parse_rank_list(const std::string& flag, const std::string& text) {
  std::set<int> ranks;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    auto rank = parse_number(flag, text.substr(start, comma - start), 0, kMaxCount);
    if (!rank) return invalid(flag, text, "local ranks such as 0 or 0,2,3");
    ranks.insert(*rank);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ranks;
}

// A number of seconds from a flag, when given; an error names the flag as it was spelled.
std::optional<Error> seconds_from(const CommandLine& line, FlagId id, double low,
                                  bool low_exclusive, double high, const std::string& expected,
                                  double& into) {
  if (!line.has(id)) return std::nullopt;
  auto seconds =
      flag_decimal(flag_name(line, id), line.value(id), low, low_exclusive, high, expected);
  if (!seconds) return seconds.error();
  into = *seconds;
  return std::nullopt;
}

std::optional<Error> read_shape(const CommandLine& line, Options& options) {
  if (line.has(node_rank)) {
    auto rank = parse_number(flag_name(line, node_rank), line.value(node_rank), 0, kMaxCount);
    if (!rank) return rank.error();
    options.overrides.node_rank = *rank;
  }
  if (line.has(nproc_per_node)) {
    const std::string word = line.value(nproc_per_node);
    if (word == "auto" || word == "gpu" || word == "cpu") {
      options.nproc_word = word;
    } else {
      auto nproc = parse_number(flag_name(line, nproc_per_node), word, 1, kMaxCount);
      if (!nproc) {
        return invalid(flag_name(line, nproc_per_node), word,
                       "a whole number >= 1, auto, gpu or cpu");
      }
      options.overrides.nproc_per_node = *nproc;
    }
  }
  if (line.has(master_port)) {
    auto port = parse_port(flag_name(line, master_port), line.value(master_port));
    if (!port) return port.error();
    options.overrides.master_port = *port;
  }
  if (line.has(master_addr)) options.overrides.master_addr = line.value(master_addr);
  options.standalone = line.has(standalone);
  return std::nullopt;
}

std::optional<Error> read_supervision(const CommandLine& line, Options& options) {
  if (auto error = seconds_from(line, term_timeout, 0, false, 86400, "seconds from 0 to 86400",
                                options.term_timeout_seconds)) {
    return error;
  }
  if (line.has(max_restarts)) {
    auto count = parse_number(flag_name(line, max_restarts), line.value(max_restarts), 0, 1000000);
    if (!count) return count.error();
    options.max_restarts = *count;
  }
  if (line.has(log_dir)) options.log_dir = line.value(log_dir);
  if (line.has(tag)) options.tag = line.value(tag);
  if (line.has(log_line_prefix_template)) {
    options.log_line_prefix_template = line.value(log_line_prefix_template);
  }
  if (line.has(local_ranks_filter)) {
    auto ranks =
        parse_rank_list(flag_name(line, local_ranks_filter), line.value(local_ranks_filter));
    if (!ranks) return ranks.error();
    options.local_ranks_filter = *ranks;
  }
  options.summary_file = line.value(summary_file);
  if (line.has(events_file)) options.events_file = line.value(events_file);
  if (line.has(job_events_file)) {
    options.job_events_file = line.value(job_events_file);
    if (options.job_events_file.empty()) {
      return invalid(flag_name(line, job_events_file), "",
                     "a file for the job's events from node 0, or none");
    }
    if (options.job_events_file == "none") options.job_events_file.clear();
  }
  if (line.has(metrics_port)) {
    options.metrics_port = line.value(metrics_port);
    if (options.metrics_port.empty()) {
      return invalid(flag_name(line, metrics_port), "",
                     "a port for the metrics (0: a free one, said), or ADDR:PORT");
    }
  }
  options.exec = line.has(exec);
  options.no_group = line.has(no_group);
  if (line.has(worker_store)) {
    const std::string& store = line.value(worker_store);
    if (store != "launcher" && store != "torch" && store != "relay") {
      return invalid(flag_name(line, worker_store), store,
                     "launcher (node 0's launcher serves the workers' torch store at "
                     "MASTER_PORT), relay (so, and every other node's workers reach it through "
                     "their own launcher) or torch (rank 0's worker serves it)");
    }
    options.torch_hosts_worker_store = store == "torch";
    options.relay_worker_store = store == "relay";
  }
  options.virtual_local_rank = line.has(virtual_local_rank);
  if (line.has(role)) {
    if (line.value(role).empty()) return invalid(flag_name(line, role), "", "a role name");
    options.role = line.value(role);
  }
  options.framework_given = line.has(framework);
  const std::string framework_name = line.has(framework) ? line.value(framework) : "pytorch";
  if (framework_name == "tensorflow") {
    options.framework = Framework::tensorflow;
  } else if (framework_name == "jax") {
    options.framework = Framework::jax;
  } else if (framework_name != "pytorch") {
    return invalid(flag_name(line, framework), framework_name, "pytorch, tensorflow or jax");
  }
  return std::nullopt;
}

std::optional<Error> read_stragglers(const CommandLine& line, Options& options) {
  const std::string every = line.value(straggler_check);
  if (line.has(straggler_check) && every != "off" && every != "0") {
    // Under a second, the dumps would cost the ranks more than they tell.
    auto seconds = flag_decimal(flag_name(line, straggler_check), every, 1, false, 86400,
                                "seconds, from 1 up to 86400, or off");
    if (!seconds) return seconds.error();
    options.straggler_check_seconds = *seconds;
  }
  if (line.has(straggler_share)) {
    auto share = flag_decimal(flag_name(line, straggler_share), line.value(straggler_share), 0,
                              true, 1, "a share of the step above 0, up to 1");
    if (!share) return share.error();
    options.straggler_share = *share;
  }
  options.bench_stragglers = line.has(bench_stragglers);
  for (FlagId needs : {straggler_share, bench_stragglers}) {
    if (line.has(needs) && options.straggler_check_seconds <= 0)
      return invalid(flag_name(line, needs), line.has(straggler_check) ? every : "given",
                     "--straggler-check S with it (the check is off)");
  }
  return std::nullopt;
}

std::optional<Error> read_hangs(const CommandLine& line, Options& options) {
  // Off unless given, or set for a whole cluster's jobs in the environment.
  const std::string hang = line.value(hang_timeout);
  if (line.has(hang_timeout) && hang != "off" && hang != "0") {
    auto seconds = flag_decimal(flag_name(line, hang_timeout), hang, 0, true, 604800,
                                "seconds, above 0 and up to 604800, or off");
    if (!seconds) return seconds.error();
    options.hang_timeout_seconds = *seconds;
  }
  // Loading a large checkpoint from blob storage on every node, compiling kernels, the first
  // meeting of thousands of ranks: tens of minutes, silent, and healthy.
  options.hang_startup_timeout_seconds = std::max(1800.0, 10 * options.hang_timeout_seconds);
  if (auto error =
          seconds_from(line, hang_startup_timeout, 0, true, 604800,
                       "seconds, above 0 and up to 604800", options.hang_startup_timeout_seconds))
    return error;
  return read_stragglers(line, options);
}

std::optional<Error> read_placement_and_preflight(const CommandLine& line, Options& options) {
  const std::string bind_word = line.has(bind) ? line.value(bind) : "auto";
  if (auto mode = bind_mode_from(bind_word)) {
    options.bind = *mode;
  } else {
    return invalid(flag_name(line, bind), bind_word,
                   "none, node, socket, exclusive, core-complex or auto");
  }
  const std::string policy = line.has(mem_policy) ? line.value(mem_policy) : "preferred";
  if (auto chosen = memory_policy_from(policy)) {
    options.memory_policy = *chosen;
  } else {
    return invalid(flag_name(line, mem_policy), policy, "preferred, bind or none");
  }
  if (line.has(preflight)) {
    options.preflight = line.value(preflight).empty() ? "gloo" : line.value(preflight);
    if (*options.preflight != "gloo" && *options.preflight != "mpi" && *options.preflight != "nccl")
      return invalid(flag_name(line, preflight), *options.preflight, "gloo, mpi or nccl");
  }
  if (line.has(preflight_min_busbw)) {
    auto gbps = flag_decimal(flag_name(line, preflight_min_busbw), line.value(preflight_min_busbw),
                             0, true, 1e9, "GB/s above 0");
    if (!gbps) return gbps.error();
    if (!options.preflight) options.preflight = "gloo";
    options.preflight_min_busbw = *gbps;
  }
  return std::nullopt;
}

std::optional<Error> read_program(const CommandLine& line, Options& options) {
  ProgramOptions& program = options.program;
  program.words = line.program;
  if (!line.after_dashes) {
    // As torchrun's parser has it (argparse): the first -- after the script is not the script's.
    auto dashes = std::find(program.words.begin(), program.words.end(), "--");
    if (dashes != program.words.end()) program.words.erase(dashes);
  }
  program.after_dashes = line.after_dashes;
  program.module = line.has(module);
  program.no_python = line.has(no_python);
  if (program.module && program.no_python) {
    return invalid(flag_name(line, no_python), "set",
                   "either --no-python or -m: a module runs under Python");
  }
  if (program.module && program.words.empty()) {
    return missing(flag_name(line, module), "a module name after the flags (-m pkg.train)");
  }
  return std::nullopt;
}

// torchrun's flags that do something else here, or nothing: what each does, said once.
void note_torchrun_flags(const CommandLine& line, Options& options) {
  for (const FlagSpec& spec : all_flags()) {
    if (!line.has(spec.id) || spec.note.empty()) continue;
    const std::string& spelled = line[spec.id]->spelled_as;
    if (spelled == spec.variable) continue;  // a cluster's default: nobody asked here
    if (spec.torchrun == Torchrun::ours_differs && spelled.find('_') == std::string::npos) continue;
    // torchrun's defaults ask for nothing that differs: no restarts, nothing redirected.
    const bool nothing_asked = spec.id == max_restarts || spec.id == redirects || spec.id == tee;
    if (nothing_asked && line.value(spec.id) == "0") continue;
    options.torchrun_notes.emplace_back(spec.note);
  }
}

}  // namespace

std::string flag_name(const CommandLine& line, FlagId id) {
  if (line.has(id)) return line[id]->spelled_as;
  return std::string(main_name(flag_spec(id)));
}

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

std::variant<Options, ExitNow, Error> parse_command_line(int argc, char** argv) {
  auto read = read_command_line(std::span<const char* const>(argv + 1, argc - 1));
  if (!read) return read.error();
  CommandLine& line = *read;
  if (line.has(help)) {
    std::cout << help_text();
    return ExitNow{0};
  }
  if (line.has(version)) {
    std::cout << version_text() << "\n";
    return ExitNow{0};
  }
  if (line.has(print_completion)) {
    auto script = completion_script(line.value(print_completion));
    if (!script)
      return invalid("--print-completion", line.value(print_completion), "bash, zsh or tcsh");
    std::cout << *script;
    return ExitNow{0};
  }
  take_flag_variables(line,
                      [](std::string_view name) { return std::getenv(std::string(name).c_str()); });
  Options options;
  options.dry_run = line.has(dry_run);
  const std::string format_word = line.has(format) ? line.value(format) : "text";
  if (format_word == "json") {
    options.format = OutputFormat::json;
  } else if (format_word != "text") {
    return invalid(flag_name(line, format), format_word, "json or text");
  }
  options.run_id = line.value(run_id);
  options.rdzv_secret_file = line.value(rdzv_secret_file);
  options.require_auth = line.has(require_auth);
  for (auto reader :
       {read_shape, read_rendezvous_flags, read_supervision, read_hangs, read_notice_flags,
        read_health_flags, read_placement_and_preflight, read_program}) {
    if (auto error = reader(line, options)) return *error;
  }
  note_torchrun_flags(line, options);
  return options;
}

}  // namespace aml
