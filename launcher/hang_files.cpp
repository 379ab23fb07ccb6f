#include "hang_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "util/make_directories.hpp"
#include "worker_torch.hpp"

namespace aml {
namespace {

// Where the workers' PyTorch puts its NCCL Flight Recorder dumps and pipes under
// --hang-timeout: the log directory, else one of the run's own.
std::string flight_recorder_dir(const Options& options, const Env& env, const std::string& run_id) {
  if (options.log_dir) return *options.log_dir;
  if (has(env, "AZUREML_RUN_ID")) return "user_logs";
  const auto tmp = env.find("TMPDIR");
  return (tmp != env.end() && !tmp->second.empty() ? tmp->second : std::string("/tmp")) +
         "/aml-launch-" + (run_id.empty() ? std::to_string(getpid()) : run_id);
}

}  // namespace

bool flight_recorder_wanted(const Options& options) {
  return options.hang_timeout_seconds > 0 || options.straggler_check_seconds > 0;
}

// Python's faulthandler (SIGABRT then prints every thread's stack) and PyTorch's flight
// recorder (a trace buffer, dumped on a timeout or when its pipe is written). The recorder's
// variables under the names the workers' torch reads: each TORCH_FR_* name from the torch that
// brought it (which warns on every rank at the old name; read from torch's own libraries:
// 2.8 the buffer and the dump file, 2.15 the dump on a timeout), TORCH_NCCL_* before, and
// where no torch is found (every torch with a recorder reads those).
EnvList hang_environment(const Options& options, const Topology& t, const Env& env,
                         const std::string& run_id) {
  EnvList out;
  if (!flight_recorder_wanted(options)) return out;
  const std::string dir = flight_recorder_dir(options, env, run_id.empty() ? t.run_id : run_id);
  const auto torch = worker_torch(options.command, options.program_interpreter, env);
  struct Wanted {
    const char* renamed;  // its new name ("" where it has no other)
    int major, minor;     // ... from this torch on
    const char* old;
    std::string value;
  };
  const Wanted wanted[] = {
      {"", 0, 0, "PYTHONFAULTHANDLER", "1"},
      {"TORCH_FR_BUFFER_SIZE", 2, 8, "TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"},
      {"TORCH_FR_DUMP_ON_TIMEOUT", 2, 15, "TORCH_NCCL_DUMP_ON_TIMEOUT", "1"},
      {"TORCH_FR_DUMP_TEMP_FILE", 2, 8, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
       dir + "/nccl_trace_rank_"},
      {"", 0, 0, "TORCH_NCCL_DEBUG_INFO_PIPE_FILE", dir + "/nccl_pipe_rank_"},
  };
  for (const Wanted& w : wanted) {
    // What the environment sets under either name is the user's: neither is added.
    if (has(env, w.old) || (*w.renamed && has(env, w.renamed))) continue;
    const bool renamed = *w.renamed && torch && torch_at_least(torch->version, w.major, w.minor);
    out.emplace_back(renamed ? w.renamed : w.old, w.value);
  }
  return out;
}

std::string prepare_hang_files(const Options& options, const Env& env, const EnvList& hang_env,
                               const std::string& run_id, RunOptions& run_options) {
  if (!flight_recorder_wanted(options)) return "";
  run_options.hang_dir = flight_recorder_dir(options, env, run_id);
  EnvList effective = hang_env;
  for (const char* name : {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "TORCH_FR_DUMP_TEMP_FILE",
                           "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"}) {
    if (auto given = env.find(name); given != env.end())
      effective.emplace_back(name, given->second);
  }
  std::string made;
  for (const auto& [name, value] : effective) {
    // torch reads TORCH_FR_DUMP_TEMP_FILE first where both are set: it comes after, and wins.
    if (name == "TORCH_NCCL_DEBUG_INFO_TEMP_FILE" &&
        run_options.flight_recorder_dump_prefix.empty())
      run_options.flight_recorder_dump_prefix = value;
    if (name == "TORCH_FR_DUMP_TEMP_FILE") run_options.flight_recorder_dump_prefix = value;
    if (name != "TORCH_NCCL_DEBUG_INFO_PIPE_FILE") continue;
    run_options.flight_recorder_pipe_prefix = value;
    const std::string dir = value.substr(0, value.rfind('/'));
    struct stat before;
    if (stat(dir.c_str(), &before) != 0) made = dir;
    make_directories(dir);
  }
  return made;
}

void remove_if_empty(const std::string& made) {
  if (!made.empty()) rmdir(made.c_str());  // fails, as it should, where something is inside
}

}  // namespace aml
