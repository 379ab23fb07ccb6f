// A notice that this node will go away or pause (issue 55): a spot VM's preemption, planned
// maintenance, a scheduler's signal before the time limit. One notice reaches every worker of
// the job (a signal, a file, the rank library's aml::notice()), in time to save a checkpoint.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace aml {

enum class NoticeKind {
  preempt,    // the VM is taken back (Azure Preempt, AWS spot, GCP preemption)
  terminate,  // the VM is deleted (Azure Terminate)
  reboot,     // planned maintenance restarts the VM (Azure Reboot)
  redeploy,   // the VM moves to another host (Azure Redeploy)
  freeze,     // the VM pauses for seconds and comes back (Azure Freeze): ridden out
  signal,     // a signal named by --notice-signal (Slurm's --signal=USR1@120, a pod's hook)
};

std::string_view to_string(NoticeKind kind);
std::optional<NoticeKind> notice_kind_named(std::string_view name);

struct Notice {
  using SystemClock = std::chrono::system_clock;

  NoticeKind kind = NoticeKind::preempt;
  std::string source;    // "azure-scheduled-events", "aws-spot", "gcp-preemption", "signal"
  std::string event_id;  // the platform's id of the event (dedupes what a poll sees again)
  int node_rank = -1;    // the node that heard it (-1: not yet known)
  std::string host;
  // When the node will be gone (or the pause begins); nullopt: the platform did not say.
  std::optional<SystemClock::time_point> deadline;
  int duration_seconds = -1;  // a freeze's length, where the platform says (-1: not said)
  std::string detail;         // what the platform said, for people ("Preempt of vm-3")

  // The job ends for it (every kind but a freeze).
  bool ends_the_job() const { return kind != NoticeKind::freeze; }
};

// The notice as workers read it (AML_LAUNCH_NOTICE_FILE) and as nodes pass it on: kind,
// source, event_id, node_rank, host, deadline (ISO 8601 UTC) and deadline_unix, seconds
// left at the time it was written, duration_seconds, detail.
nlohmann::json notice_json(const Notice& notice);
Result<Notice> notice_from_json(const nlohmann::json& value);
// One line for people: "Preempt (azure-scheduled-events) of node 1 (vm-1), 28 s ahead".
std::string describe(const Notice& notice, Notice::SystemClock::time_point now);

// "2026-11-28T10:00:00Z"; and the RFC 1123 dates HTTP and Azure's Scheduled Events write
// ("Sat, 28 Nov 2026 10:00:00 GMT"), and ISO 8601 UTC ("2026-11-28T10:00:00Z", AWS's).
std::string iso8601_utc(Notice::SystemClock::time_point when);
std::optional<Notice::SystemClock::time_point> parse_http_date(std::string_view text);
std::optional<Notice::SystemClock::time_point> parse_iso8601_utc(std::string_view text);

}  // namespace aml
