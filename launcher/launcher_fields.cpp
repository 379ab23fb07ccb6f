#include "launcher_fields.hpp"

#include <string>
#include <utility>

#include "util/expand_fields.hpp"

namespace aml {

std::optional<Error> expand_launcher_fields(Options& options, const Topology& t) {
  // An elastic job's node rank comes at each round, after these paths are needed.
  if (t.elastic) {
    for (auto [flag, text] :
         {std::pair<const char*, std::string>{"--summary-file", options.summary_file},
          {"--log-dir", options.log_dir.value_or("")},
          {"--events-file", options.events_file.value_or("")},
          {"--job-events-file", options.job_events_file}}) {
      if (text.find("{rank}") != std::string::npos ||
          text.find("{node_rank}") != std::string::npos) {
        return invalid(flag, text,
                       "a path without {rank} or {node_rank} in an elastic job (--nnodes MIN:MAX): "
                       "a node's rank is given at each round, after the path is needed; one "
                       "launcher per node needs none");
      }
    }
  }
  const bool per_process = t.launch == Launch::per_process;
  auto expand = [&](const std::string& text) {
    return expand_fields(text, {{"rank", per_process ? t.rank : t.node_rank},
                                {"local_rank", per_process ? t.local_rank : 0},
                                {"node_rank", t.node_rank}});
  };
  options.summary_file = expand(options.summary_file);
  if (options.log_dir) options.log_dir = expand(*options.log_dir);
  if (options.events_file) options.events_file = expand(*options.events_file);
  options.job_events_file = expand(options.job_events_file);
  return std::nullopt;
}

}  // namespace aml
