// What each platform's metadata service says, read into notices (issue 55): this VM's events
// and no other's, the dates as the platforms write them, and what is malformed named.
#include "notice/platform_notices.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace aml::platform_notices_test {
namespace {

using SystemClock = Notice::SystemClock;

std::string document(const std::string& type, const std::string& vm,
                     const std::string& status = "Scheduled",
                     const std::string& not_before = "Sat, 28 Nov 2026 10:00:30 GMT") {
  nlohmann::json event = {{"EventId", "602d9444"},
                          {"EventStatus", status},
                          {"EventType", type},
                          {"ResourceType", "VirtualMachine"},
                          {"Resources", {vm, "other-vm"}},
                          {"NotBefore", not_before},
                          {"DurationInSeconds", 9},
                          {"Description", "x"},
                          {"EventSource", "Platform"}};
  return nlohmann::json{{"DocumentIncarnation", 2}, {"Events", {event}}}.dump();
}

TEST(PlatformNotices, AzurePreemptOfThisVmWithItsDeadline) {
  auto notices = azure_scheduled_events(document("Preempt", "VM-3"), {"host", "vm-3"});
  ASSERT_TRUE(notices) << notices.error().message();
  ASSERT_EQ(notices->size(), 1u);
  const Notice& n = (*notices)[0];
  EXPECT_EQ(n.kind, NoticeKind::preempt);
  EXPECT_EQ(n.source, "azure-scheduled-events");
  EXPECT_EQ(n.event_id, "602d9444");
  ASSERT_TRUE(n.deadline);
  EXPECT_EQ(iso8601_utc(*n.deadline), "2026-11-28T10:00:30Z");
  EXPECT_EQ(n.detail, "Preempt of vm-3");
}

TEST(PlatformNotices, AzureEventsOfOtherVmsOrNoLongerScheduledAreNotThisNodes) {
  auto other = azure_scheduled_events(document("Preempt", "vm-7"), {"vm-3"});
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->empty());
  auto done = azure_scheduled_events(document("Reboot", "vm-3", "Completed"), {"vm-3"});
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->empty());
  auto none = azure_scheduled_events(R"({"DocumentIncarnation": 0, "Events": []})", {"vm-3"});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(PlatformNotices, AzureFreezeCarriesItsLengthAndAStartedEventHasNoDeadline) {
  auto freeze = azure_scheduled_events(document("Freeze", "vm-3", "Started", ""), {"vm-3"});
  ASSERT_TRUE(freeze);
  ASSERT_EQ(freeze->size(), 1u);
  EXPECT_EQ((*freeze)[0].kind, NoticeKind::freeze);
  EXPECT_FALSE((*freeze)[0].ends_the_job());
  EXPECT_EQ((*freeze)[0].duration_seconds, 9);
  EXPECT_FALSE((*freeze)[0].deadline);
}

TEST(PlatformNotices, AzureMalformedDocumentsAreNamed) {
  EXPECT_EQ(azure_scheduled_events("<html>", {"vm"}).error().expected, "a JSON document");
  EXPECT_EQ(azure_scheduled_events(R"({"Events": 3})", {"vm"}).error().expected,
            "a document with an Events list");
  EXPECT_NE(azure_scheduled_events(document("Explode", "vm"), {"vm"})
                .error()
                .expected.find("EventType of Preempt"),
            std::string::npos);
  EXPECT_NE(azure_scheduled_events(document("Preempt", "vm", "Scheduled", "tomorrow"), {"vm"})
                .error()
                .expected.find("NotBefore"),
            std::string::npos);
}

TEST(PlatformNotices, AwsSpotActionAndGcpPreempted) {
  auto aws = aws_spot_action(R"({"action": "terminate", "time": "2026-11-28T10:02:00Z"})");
  ASSERT_TRUE(aws) << aws.error().message();
  EXPECT_EQ(aws->source, "aws-spot");
  EXPECT_EQ(iso8601_utc(*aws->deadline), "2026-11-28T10:02:00Z");
  EXPECT_FALSE(aws_spot_action(R"({"action": "dance", "time": "2026-11-28T10:02:00Z"})"));
  EXPECT_FALSE(aws_spot_action(R"({"action": "stop", "time": "soon"})"));
  const auto now = SystemClock::now();
  auto quiet = gcp_preempted("FALSE", now);
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(quiet->empty());
  auto preempted = gcp_preempted("TRUE\n", now);
  ASSERT_TRUE(preempted);
  ASSERT_EQ(preempted->size(), 1u);
  EXPECT_EQ(*(*preempted)[0].deadline, now + std::chrono::seconds(30));
  EXPECT_FALSE(gcp_preempted("maybe", now));
}

TEST(PlatformNotices, DatesAsThePlatformsWriteThem) {
  EXPECT_EQ(iso8601_utc(*parse_http_date("Thu, 22 Jul 2021 04:50:17 GMT")), "2021-07-22T04:50:17Z");
  EXPECT_FALSE(parse_http_date("Thu, 22 Jul 2021 04:50:17 CET"));
  EXPECT_FALSE(parse_http_date("Thu, 22 Foo 2021 04:50:17 GMT"));
  EXPECT_FALSE(parse_http_date("Thu, 22 Jul 2021 04:50:17 GMT and more"));
  EXPECT_EQ(iso8601_utc(*parse_iso8601_utc("2026-11-28T10:02:00.123Z")), "2026-11-28T10:02:00Z");
  EXPECT_FALSE(parse_iso8601_utc("2026-11-28T10:02:00+02:00"));
  EXPECT_FALSE(parse_iso8601_utc("2026-13-28T10:02:00Z"));
}

TEST(PlatformNotices, ANoticeGoesToJsonAndBackWhole) {
  Notice n;
  n.kind = NoticeKind::terminate;
  n.source = "azure-scheduled-events";
  n.event_id = "E9";
  n.node_rank = 3;
  n.host = "vm-3";
  n.deadline = SystemClock::time_point(std::chrono::seconds(1795860000));
  n.detail = "Terminate of vm-3";
  auto back = notice_from_json(notice_json(n));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, n.kind);
  EXPECT_EQ(back->event_id, "E9");
  EXPECT_EQ(back->node_rank, 3);
  EXPECT_EQ(back->host, "vm-3");
  EXPECT_EQ(back->deadline, n.deadline);
  EXPECT_FALSE(notice_from_json(nlohmann::json{{"kind", "asteroid"}}));
}

}  // namespace
}  // namespace aml::platform_notices_test
