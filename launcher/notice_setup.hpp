// What this launcher listens to for notices of the job's end (issue 55), from its flags and
// the environment: the platforms' metadata services (--notice-from, auto by the platform the
// job runs on), --notice-signal, --notice-to-workers, and the workers' notice file.
#pragma once

#include <aml/error.hpp>
#include <string>
#include <vector>

#include "notice/notice_desk.hpp"
#include "options.hpp"
#include "topology/env.hpp"

namespace aml {

// The platforms --notice-from names; auto: where the environment shows it (Azure ML or Azure
// Batch: azure; SageMaker or AWS Batch: aws; Vertex AI: gcp), else none. `why`: in words.
std::vector<NoticePlatform> notice_platforms(const Options& options, const Env& env,
                                             std::string& why);
// AML_LAUNCH_METADATA_URL, else the platforms' link-local service.
std::string metadata_url(const Env& env);

Result<NoticeSettings> notice_settings(const Options& options, const Env& env, int node_rank,
                                       const std::string& host);

}  // namespace aml
