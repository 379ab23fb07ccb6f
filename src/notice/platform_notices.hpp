// What each platform's metadata service says of a coming preemption or maintenance, read into
// notices (notice.hpp). Pure functions over the answer's body; the metadata watch
// (metadata_watch.hpp) asks.
#pragma once

#include <aml/error.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "notice/notice.hpp"

namespace aml {

// Azure's Scheduled Events document (GET /metadata/scheduledevents?api-version=2020-07-01):
// {"DocumentIncarnation": N, "Events": [{"EventId", "EventType": Preempt | Terminate | Reboot
// | Redeploy | Freeze, "ResourceType": "VirtualMachine", "Resources": [VM names], "EventStatus":
// Scheduled | Started, "NotBefore": RFC 1123 date or "", "DurationInSeconds", "Description"}]}.
// The events of this VM (a name of `this_vm`, compared without case); an event of another VM,
// or one no longer scheduled or started, is none of this node's business.
Result<std::vector<Notice>> azure_scheduled_events(std::string_view body,
                                                   const std::vector<std::string>& this_vm);

// AWS's spot interruption (GET /latest/meta-data/spot/instance-action: 404 until there is
// one, then {"action": "terminate" | "stop" | "hibernate", "time": ISO 8601 UTC}).
Result<Notice> aws_spot_action(std::string_view body);

// GCP's preemption (GET /computeMetadata/v1/instance/preempted: "TRUE" once the VM is being
// preempted, 30 s ahead, else "FALSE"): a notice, or nullopt-like empty vector for FALSE.
Result<std::vector<Notice>> gcp_preempted(std::string_view body,
                                          Notice::SystemClock::time_point now);

}  // namespace aml
