// TF_CONFIG, as TensorFlow, Azure ML and Kubeflow's TFJob write it.
#pragma once

#include <aml/error.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aml {

struct TfConfig {
  // Task type -> "host:port" addresses, in the order of the JSON object.
  std::vector<std::pair<std::string, std::vector<std::string>>> cluster;
  std::string task_type;
  int task_index = 0;

  const std::vector<std::string>* tasks(std::string_view type) const;
  // The training world in rank order: chief (or legacy master) first, then the workers.
  std::vector<std::string> training_world() const;
};

// Parses and checks shape: cluster is an object of string lists, task has type and index.
Result<TfConfig> parse_tf_config(std::string_view text);
// Whether TF_CONFIG names a task (a cluster alone does not make a rank). Malformed JSON counts
// as a task, so that it is reported rather than silently skipped.
bool tf_config_has_task(std::string_view text);

}  // namespace aml
