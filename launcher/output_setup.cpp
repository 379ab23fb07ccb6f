#include "output_setup.hpp"

#include "node_group_setup.hpp"

namespace aml {
namespace {

// torchrun's --log-line-prefix-template as a --tag template: its per-worker macros become
// fields, the launcher's own are filled in; anything else stays as it is, as torchrun's
// safe_substitute keeps it.
std::string tag_of_torchrun_template(const std::string& text, const Topology& t) {
  std::string out = text;
  auto replace = [&out](const std::string& macro, const std::string& by) {
    for (auto at = out.find(macro); at != std::string::npos; at = out.find(macro, at + by.size()))
      out.replace(at, macro.size(), by);
  };
  replace("${rank}", "{rank}");
  replace("${local_rank}", "{local_rank}");
  replace("${role_name}", t.role);
  replace("${hostname}", host_name());
  return out;
}

}  // namespace

OutputOptions output_options(const Options& options, const LaunchPlan& plan, const Env& env) {
  OutputOptions out;
  if (!options.tag && options.log_line_prefix_template) {
    out.tag_template = tag_of_torchrun_template(*options.log_line_prefix_template, plan.topology);
  } else if (!options.tag) {
    if (plan.workers.size() > 1) out.tag_template = "[rank {rank}] ";
  } else if (*options.tag != "none") {
    out.tag_template = *options.tag;
  }
  out.console_local_ranks = options.local_ranks_filter;
  if (options.log_dir) {
    out.log_dir = *options.log_dir;
  } else if (has(env, "AZUREML_RUN_ID")) {
    out.log_dir = "user_logs";  // Azure ML's std_log_process_<rank>.txt layout
  }
  return out;
}

}  // namespace aml
