// The desk where a node's notices are heard once (issue 55): its own, and those the other nodes
// pass on through the rendezvous, which bring this node's own back to it too.
#include "notice/notice_desk.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace aml::notice_desk_test {
namespace {

struct Desk {
  Desk() {
    char dir[] = "/tmp/notice-desk-XXXXXX";
    folder = mkdtemp(dir);
    NoticeSettings settings;
    settings.launcher_signal = SIGUSR1;
    settings.file = folder + "/notice.json";
    settings.node_rank = 1;
    settings.host = "vm-1";
    desk = std::make_unique<NoticeDesk>(settings, [this](const std::string& l) { said += l; });
  }
  ~Desk() {
    unlink((folder + "/notice.json").c_str());
    rmdir(folder.c_str());
  }
  nlohmann::json file() const {
    std::ifstream in(folder + "/notice.json");
    return nlohmann::json::parse(in, nullptr, false);
  }
  std::string folder;
  std::string said;
  std::unique_ptr<NoticeDesk> desk;
};

// What the rendezvous carries: the notice's JSON, read back.
Notice passed_on(const Notice& notice) {
  auto back = notice_from_json(nlohmann::json::parse(notice_json(notice).dump()));
  EXPECT_TRUE(back) << (back ? "" : back.error().message());
  return *back;
}

TEST(NoticeDesk, ItsOwnNoticeComingBackFromTheOtherNodesIsNotHeardTwice) {
  Desk d;
  d.desk->signal_came(SIGUSR1);
  auto heard = d.desk->take_new();
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_TRUE(heard[0].here);  // the other nodes are still to be told
  EXPECT_EQ(heard[0].notice.node_rank, 1);
  EXPECT_EQ(d.file()["node_rank"], 1);

  d.desk->heard_elsewhere(passed_on(heard[0].notice));
  EXPECT_TRUE(d.desk->take_new().empty());
}

TEST(NoticeDesk, AnotherNodesNoticeIsTheJobsAndItsFileNamesThatNode) {
  Desk d;
  Notice other;
  other.kind = NoticeKind::preempt;
  other.source = "azure-scheduled-events";
  other.event_id = "E7";
  other.node_rank = 3;
  other.host = "vm-3";
  d.desk->heard_elsewhere(passed_on(other));
  auto heard = d.desk->take_new();
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_FALSE(heard[0].here);  // not passed on again
  EXPECT_EQ(d.file()["node_rank"], 3);
  EXPECT_EQ(d.file()["host"], "vm-3");
  ASSERT_TRUE(d.desk->ending());
  EXPECT_EQ(d.desk->ending()->node_rank, 3);

  // This node's own notice after it: heard (and said), but the job's notice stays the first.
  d.desk->signal_came(SIGUSR1);
  ASSERT_EQ(d.desk->take_new().size(), 1u);
  EXPECT_EQ(d.file()["node_rank"], 3);
  EXPECT_EQ(d.desk->ending()->node_rank, 3);
}

}  // namespace
}  // namespace aml::notice_desk_test
