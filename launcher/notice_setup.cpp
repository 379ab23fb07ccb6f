#include "notice_setup.hpp"

#include <unistd.h>

namespace aml {
namespace {

bool has_prefix(const Env& env, std::string_view prefix) {
  const auto it = env.lower_bound(prefix);
  return it != env.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

bool has(const Env& env, const char* name) { return env.count(name) > 0; }

}  // namespace

std::vector<NoticePlatform> notice_platforms(const Options& options, const Env& env,
                                             std::string& why) {
  std::vector<NoticePlatform> platforms;
  const std::string& from = options.notice_from;
  if (from == "none") {
    why = "--notice-from none";
    return platforms;
  }
  if (from != "auto") {
    for (const auto& [name, platform] :
         {std::pair{"azure", NoticePlatform::azure}, std::pair{"aws", NoticePlatform::aws},
          std::pair{"gcp", NoticePlatform::gcp}}) {
      if (("," + from + ",").find(std::string(",") + name + ",") != std::string::npos)
        platforms.push_back(platform);
    }
    why = "--notice-from " + from;
    return platforms;
  }
  if (has_prefix(env, "AZUREML_") || has_prefix(env, "AZ_BATCH")) {
    platforms.push_back(NoticePlatform::azure);
    why = "Azure ML / Azure Batch (AZUREML_*, AZ_BATCH*)";
  } else if (has(env, "TRAINING_JOB_NAME") || has_prefix(env, "SM_") ||
             has(env, "AWS_BATCH_JOB_ID")) {
    platforms.push_back(NoticePlatform::aws);
    why = "SageMaker / AWS Batch (SM_*, TRAINING_JOB_NAME, AWS_BATCH_JOB_ID)";
  } else if (has(env, "CLOUD_ML_JOB_ID") || has_prefix(env, "AIP_")) {
    platforms.push_back(NoticePlatform::gcp);
    why = "Vertex AI (CLOUD_ML_JOB_ID, AIP_*)";
  } else {
    why = "no cloud platform in the environment (--notice-from names one)";
  }
  return platforms;
}

std::string metadata_url(const Env& env) {
  const auto it = env.find("AML_LAUNCH_METADATA_URL");
  return it != env.end() && !it->second.empty() ? it->second : "http://169.254.169.254";
}

Result<NoticeSettings> notice_settings(const Options& options, const Env& env, int node_rank,
                                       const std::string& host) {
  NoticeSettings settings;
  settings.launcher_signal = options.notice_signal;
  settings.to_workers = options.notice_to_workers;
  settings.node_rank = node_rank;
  settings.host = host;
  std::string why;
  auto platforms = notice_platforms(options, env, why);
  if (!platforms.empty()) {
    auto url = parse_http_url(metadata_url(env));
    if (!url) return url.error();
    MetadataWatchOptions watch;
    watch.platforms = std::move(platforms);
    watch.url = std::move(*url);
    if (!host.empty()) watch.vm_names.push_back(host);
    settings.metadata = std::move(watch);
  }
  // Where no notice can come, the workers get no file to look for (and the spawn no variable).
  if (!settings.metadata && settings.launcher_signal == 0) return settings;
  const auto tmp = env.find("TMPDIR");
  const std::string dir = tmp != env.end() && !tmp->second.empty() ? tmp->second : "/tmp";
  settings.file = dir + "/aml-launch-notice-" + std::to_string(getpid()) + ".json";
  return settings;
}

}  // namespace aml
