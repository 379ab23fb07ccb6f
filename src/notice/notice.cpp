#include "notice/notice.hpp"

#include <time.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace aml {
namespace {

using nlohmann::json;
using SystemClock = Notice::SystemClock;

constexpr std::array<std::pair<NoticeKind, std::string_view>, 6> kKinds{{
    {NoticeKind::preempt, "preempt"},
    {NoticeKind::terminate, "terminate"},
    {NoticeKind::reboot, "reboot"},
    {NoticeKind::redeploy, "redeploy"},
    {NoticeKind::freeze, "freeze"},
    {NoticeKind::signal, "signal"},
}};

std::optional<SystemClock::time_point> from_fields(int year, int month, int day, int hour,
                                                   int minute, int second) {
  if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 ||
      hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  tm fields{};
  fields.tm_year = year - 1900;
  fields.tm_mon = month - 1;
  fields.tm_mday = day;
  fields.tm_hour = hour;
  fields.tm_min = minute;
  fields.tm_sec = second;
  const time_t seconds = timegm(&fields);
  if (seconds == static_cast<time_t>(-1)) return std::nullopt;
  return SystemClock::from_time_t(seconds);
}

}  // namespace

std::string_view to_string(NoticeKind kind) {
  for (const auto& [k, name] : kKinds)
    if (k == kind) return name;
  return "preempt";
}

std::optional<NoticeKind> notice_kind_named(std::string_view name) {
  for (const auto& [kind, n] : kKinds)
    if (n == name) return kind;
  return std::nullopt;
}

std::string iso8601_utc(SystemClock::time_point when) {
  const time_t seconds = SystemClock::to_time_t(when);
  tm fields{};
  gmtime_r(&seconds, &fields);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &fields);
  return text;
}

std::optional<SystemClock::time_point> parse_http_date(std::string_view text) {
  // "Sat, 28 Nov 2026 10:00:00 GMT" (RFC 1123; Azure writes it so).
  static constexpr std::array<std::string_view, 12> kMonths{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::string copy(text.substr(0, 64));
  int day = 0, year = 0, hour = 0, minute = 0, second = 0, used = 0;
  char weekday[4] = {}, month[4] = {}, zone[4] = {};
  if (std::sscanf(copy.c_str(), "%3[A-Za-z], %d %3[A-Za-z] %d %d:%d:%d %3[A-Z]%n", weekday, &day,
                  month, &year, &hour, &minute, &second, zone, &used) != 8 ||
      static_cast<std::size_t>(used) != copy.size() || std::string_view(zone) != "GMT") {
    return std::nullopt;
  }
  for (std::size_t m = 0; m < kMonths.size(); ++m)
    if (kMonths[m] == month)
      return from_fields(year, static_cast<int>(m) + 1, day, hour, minute, second);
  return std::nullopt;
}

std::optional<SystemClock::time_point> parse_iso8601_utc(std::string_view text) {
  // "2026-11-28T10:00:00Z" (AWS writes it so; fractions of a second are dropped).
  const std::string copy(text.substr(0, 64));
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &used) != 6) {
    return std::nullopt;
  }
  std::string_view rest = std::string_view(copy).substr(static_cast<std::size_t>(used));
  if (!rest.empty() && rest.front() == '.') {
    std::size_t digits = 1;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    rest.remove_prefix(digits);
  }
  if (rest != "Z" && rest != "+00:00") return std::nullopt;
  return from_fields(year, month, day, hour, minute, second);
}

json notice_json(const Notice& notice) {
  json out = {{"kind", std::string(to_string(notice.kind))},
              {"source", notice.source},
              {"event_id", notice.event_id},
              {"node_rank", notice.node_rank},
              {"host", notice.host},
              {"detail", notice.detail},
              {"deadline", nullptr},
              {"deadline_unix", nullptr},
              {"duration_seconds", nullptr}};
  if (notice.deadline) {
    out["deadline"] = iso8601_utc(*notice.deadline);
    out["deadline_unix"] =
        std::chrono::duration_cast<std::chrono::seconds>(notice.deadline->time_since_epoch())
            .count();
  }
  if (notice.duration_seconds >= 0) out["duration_seconds"] = notice.duration_seconds;
  return out;
}

Result<Notice> notice_from_json(const json& value) {
  const auto text = [&](const char* key) -> std::string {
    const auto it = value.find(key);
    return it != value.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!value.is_object()) return invalid("notice", value.dump(), "a JSON object");
  const auto kind = notice_kind_named(text("kind"));
  if (!kind) return invalid("notice", value.dump().substr(0, 200), "a known kind");
  Notice notice;
  notice.kind = *kind;
  notice.source = text("source");
  notice.event_id = text("event_id");
  notice.host = text("host");
  notice.detail = text("detail");
  if (const auto it = value.find("node_rank"); it != value.end() && it->is_number_integer())
    notice.node_rank = it->get<int>();
  if (const auto it = value.find("deadline_unix"); it != value.end() && it->is_number_integer())
    notice.deadline = SystemClock::time_point(std::chrono::seconds(it->get<long long>()));
  if (const auto it = value.find("duration_seconds"); it != value.end() && it->is_number_integer())
    notice.duration_seconds = it->get<int>();
  return notice;
}

std::string describe(const Notice& notice, SystemClock::time_point now) {
  std::string text = notice.detail.empty() ? std::string(to_string(notice.kind)) : notice.detail;
  text += " (" + notice.source + ")";
  if (notice.node_rank >= 0) {
    text += " on node " + std::to_string(notice.node_rank);
    if (!notice.host.empty()) text += " (" + notice.host + ")";
  }
  if (notice.deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(*notice.deadline - now);
    text += left.count() > 0 ? ", " + std::to_string(left.count()) + " s ahead" : ", due now";
    text += " (" + iso8601_utc(*notice.deadline) + ")";
  }
  if (notice.kind == NoticeKind::freeze && notice.duration_seconds >= 0)
    text += ", a pause of " + std::to_string(notice.duration_seconds) + " s";
  return text;
}

}  // namespace aml
