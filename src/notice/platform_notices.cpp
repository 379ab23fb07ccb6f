#include "notice/platform_notices.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace aml {
namespace {

using nlohmann::json;

constexpr std::string_view kAzure = "azure-scheduled-events";

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string text_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string shortened(std::string_view body) {
  std::string text(body.substr(0, 120));
  for (char& c : text)
    if (c == '\n' || c == '\r' || static_cast<unsigned char>(c) < 0x20) c = ' ';
  return body.size() > 120 ? text + "..." : text;
}

}  // namespace

Result<std::vector<Notice>> azure_scheduled_events(std::string_view body,
                                                   const std::vector<std::string>& this_vm) {
  const json document = json::parse(body, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return invalid(std::string(kAzure), shortened(body), "a JSON document");
  const auto events = document.find("Events");
  if (events == document.end() || !events->is_array())
    return invalid(std::string(kAzure), shortened(body), "a document with an Events list");
  std::vector<Notice> notices;
  for (const json& event : *events) {
    if (!event.is_object())
      return invalid(std::string(kAzure), shortened(event.dump()), "an event that is an object");
    const std::string type = text_at(event, "EventType");
    const std::string status = text_at(event, "EventStatus");
    if (status != "Scheduled" && status != "Started") continue;  // done, or called off
    const std::string resource_type = text_at(event, "ResourceType");
    if (!resource_type.empty() && resource_type != "VirtualMachine") continue;
    const auto resources = event.find("Resources");
    if (resources == event.end() || !resources->is_array()) continue;
    std::string mine;
    for (const json& resource : *resources) {
      if (!resource.is_string()) continue;
      for (const std::string& name : this_vm)
        if (!name.empty() && same_name(resource.get_ref<const std::string&>(), name)) mine = name;
    }
    if (mine.empty()) continue;  // another VM's event
    Notice notice;
    const auto kind = notice_kind_named([&] {
      std::string lower = type;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return lower;
    }());
    if (!kind || *kind == NoticeKind::signal) {
      return invalid(std::string(kAzure), type.empty() ? "(no EventType)" : type,
                     "an EventType of Preempt, Terminate, Reboot, Redeploy or Freeze");
    }
    notice.kind = *kind;
    notice.source = std::string(kAzure);
    notice.event_id = text_at(event, "EventId");
    const std::string not_before = text_at(event, "NotBefore");
    if (!not_before.empty()) {
      notice.deadline = parse_http_date(not_before);
      if (!notice.deadline)
        return invalid(std::string(kAzure), not_before,
                       "a NotBefore date like \"Sat, 28 Nov 2026 10:00:00 GMT\"");
    }
    if (const auto it = event.find("DurationInSeconds");
        it != event.end() && it->is_number_integer() && it->get<long long>() >= 0 &&
        it->get<long long>() < 86400 * 7)
      notice.duration_seconds = static_cast<int>(it->get<long long>());
    notice.detail = type + " of " + mine;
    notices.push_back(std::move(notice));
  }
  return notices;
}

Result<Notice> aws_spot_action(std::string_view body) {
  const json document = json::parse(body, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return invalid("aws-spot", shortened(body), "a JSON document");
  const std::string action = text_at(document, "action");
  if (action != "terminate" && action != "stop" && action != "hibernate")
    return invalid("aws-spot", shortened(body), "an action of terminate, stop or hibernate");
  Notice notice;
  notice.kind = NoticeKind::preempt;
  notice.source = "aws-spot";
  const std::string time = text_at(document, "time");
  notice.deadline = parse_iso8601_utc(time);
  if (!notice.deadline) return invalid("aws-spot", time, "a time like 2026-11-28T10:00:00Z");
  notice.event_id = action + "@" + time;
  notice.detail = "spot " + action;
  return notice;
}

Result<std::vector<Notice>> gcp_preempted(std::string_view body,
                                          Notice::SystemClock::time_point now) {
  std::string_view word = body;
  while (!word.empty() && std::isspace(static_cast<unsigned char>(word.back())))
    word.remove_suffix(1);
  if (word == "FALSE") return std::vector<Notice>{};
  if (word != "TRUE") return invalid("gcp-preemption", shortened(body), "TRUE or FALSE");
  Notice notice;
  notice.kind = NoticeKind::preempt;
  notice.source = "gcp-preemption";
  notice.event_id = "preempted";
  notice.deadline = now + std::chrono::seconds(30);  // GCP's notice: 30 s
  notice.detail = "preemption";
  return std::vector<Notice>{notice};
}

}  // namespace aml
