// aml::notice(): the notice file aml-launch writes (AML_LAUNCH_NOTICE_FILE), read when asked.
#include <aml/rank.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace aml {

std::optional<JobNotice> notice() {
  const char* path = std::getenv("AML_LAUNCH_NOTICE_FILE");
  if (path == nullptr || *path == '\0') return std::nullopt;
  std::ifstream file(path);
  if (!file) return std::nullopt;  // none yet
  std::stringstream text;
  text << file.rdbuf();
  // Replaced whole by the launcher: a reader sees all of it or none.
  const auto found = nlohmann::json::parse(text.str(), nullptr, false);
  if (found.is_discarded() || !found.is_object()) return std::nullopt;
  const auto string_at = [&](const char* key) {
    const auto it = found.find(key);
    return it != found.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const auto number_at = [&](const char* key) -> long long {
    const auto it = found.find(key);
    return it != found.end() && it->is_number_integer() ? it->get<long long>() : -1;
  };
  JobNotice notice;
  notice.kind = string_at("kind");
  notice.source = string_at("source");
  notice.host = string_at("host");
  notice.detail = string_at("detail");
  notice.node_rank = static_cast<int>(number_at("node_rank"));
  notice.deadline_unix = number_at("deadline_unix");
  notice.duration_seconds = static_cast<int>(number_at("duration_seconds"));
  return notice;
}

}  // namespace aml
