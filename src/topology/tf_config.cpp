#include "topology/tf_config.hpp"

#include <nlohmann/json.hpp>

namespace aml {
namespace {

Error bad(std::string_view text, const std::string& why) {
  return invalid("TF_CONFIG", std::string(text),
                 "JSON such as {\"cluster\": {\"worker\": [\"host:port\"]}, \"task\": "
                 "{\"type\": \"worker\", \"index\": 0}} (" +
                     why + ")");
}

}  // namespace

const std::vector<std::string>* TfConfig::tasks(std::string_view type) const {
  for (const auto& [name, addresses] : cluster) {
    if (name == type) return &addresses;
  }
  return nullptr;
}

std::vector<std::string> TfConfig::training_world() const {
  std::vector<std::string> world;
  for (std::string_view type : {"chief", "master", "worker"}) {
    if (const auto* list = tasks(type)) world.insert(world.end(), list->begin(), list->end());
  }
  return world;
}

bool tf_config_has_task(std::string_view text) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  // Malformed JSON counts as present so that it is reported, not silently skipped.
  if (json.is_discarded()) return true;
  return json.is_object() && json.contains("task");
}

Result<TfConfig> parse_tf_config(std::string_view text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return bad(text, "not valid JSON at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::exception& e) {
    return bad(text, "not valid JSON: " + std::string(e.what()));  // e.g. a number out of range
  }
  if (!json.is_object()) return bad(text, "not a JSON object");
  TfConfig config;
  auto cluster = json.find("cluster");
  if (cluster == json.end() || !cluster->is_object()) return bad(text, "no \"cluster\" object");
  for (const auto& [type, addresses] : cluster->items()) {
    if (!addresses.is_array()) return bad(text, "cluster." + type + " is not a list");
    std::vector<std::string> list;
    for (const auto& address : addresses) {
      if (!address.is_string()) return bad(text, "cluster." + type + " holds a non-string");
      list.push_back(address.get<std::string>());
    }
    config.cluster.emplace_back(type, std::move(list));
  }
  auto task = json.find("task");
  if (task == json.end() || !task->is_object()) return bad(text, "no \"task\" object");
  auto type = task->find("type");
  auto index = task->find("index");
  if (type == task->end() || !type->is_string()) return bad(text, "task.type is not a string");
  if (index == task->end() || !index->is_number_integer() || index->get<long long>() < 0 ||
      index->get<long long>() > (1 << 24)) {
    return bad(text, "task.index is not a whole number >= 0");
  }
  config.task_type = type->get<std::string>();
  config.task_index = static_cast<int>(index->get<long long>());
  return config;
}

}  // namespace aml
