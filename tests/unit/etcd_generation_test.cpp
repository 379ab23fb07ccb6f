// A job's id used again (a Kubeflow job started again whole under its name) against a real
// etcd: a launcher that finds the last run of the id ended begins the next generation; one that
// finds it running joins it; a launcher that comes back under a new lease stays in its own, and
// finds its end there.
// The generation is what tells two runs' round 0 apart (the events' rendezvous_formed).
#include "etcd/base64.hpp"
#include "etcd/etcd_rendezvous.hpp"
#include "etcd_rendezvous_fixture.hpp"

namespace aml::etcd {
namespace {

TEST_F(EtcdRendezvousTest, AJobIdUsedAgainAfterItsEndRunsAsTheNextGeneration) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  SessionOptions options{
      {server_->endpoint()}, std::string("/t/") + test->name() + "/", 5s, "ended", transport()};
  auto start = [&] { return EtcdSession::start(options, 5s); };
  auto first = start();
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ((*first)->generation(), 0);
  auto beside = start();
  ASSERT_TRUE(beside.ok()) << beside.error().message();
  EXPECT_EQ((*beside)->generation(), 0) << "the run has not ended: it is joined";
  // Keys of the run's own (before and after its end's in etcd's order), gone with it once the
  // next run begins; a will (a launcher of it may still be finishing) is not.
  for (const char* key : {"aml/x", "notice/x", "wills/x", "zz/x"}) {
    auto put = (*first)->call(
        "/v3/kv/put", {{"key", to_base64((*first)->full_key(key))}, {"value", to_base64("1")}},
        std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(put.ok()) << put.error().message();
  }
  // The run ends (its verdict's key), and the job is started again under its id.
  auto ended = (*first)->call(
      "/v3/kv/put", {{"key", to_base64((*first)->full_key("ended"))}, {"value", to_base64("0")}},
      std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(ended.ok()) << ended.error().message();
  auto next = start();
  ASSERT_TRUE(next.ok()) << next.error().message();
  EXPECT_EQ((*next)->generation(), 1);
  EXPECT_EQ(EtcdRendezvous(*next).generation(), 1) << "the rendezvous names its generation";
  auto next_beside = start();
  ASSERT_TRUE(next_beside.ok()) << next_beside.error().message();
  EXPECT_EQ((*next_beside)->generation(), 1);
  // A launcher of the first run that comes back under a new lease finds its own run's end,
  // not a run of the next.
  auto renewed = (*first)->renew(5s);
  ASSERT_TRUE(renewed.ok()) << renewed.error().message();
  EXPECT_EQ((*renewed)->generation(), 0);
  // The ended run's keys went when the next began, but its end: a launcher of it that was
  // away (paused, cut off) reads the end when it comes back, and ends. Before, the end went
  // too, and such a launcher waited for a seat in a run nobody ran any more.
  EtcdRendezvous back(*renewed);
  auto end = back.get("ended", 0ms);
  ASSERT_TRUE(end.ok()) << end.error().message();
  EXPECT_EQ(end->value_or("(absent)"), "0");
  for (const char* key : {"aml/x", "notice/x", "zz/x"}) {
    auto gone = back.get(key, 0ms);
    ASSERT_TRUE(gone.ok()) << gone.error().message();
    EXPECT_FALSE(gone->has_value()) << key << ": the ended run's other keys go with it";
  }
  // Its deletion would be read as that launcher's loss (the campaign's bug 20: node 0, still
  // finishing after a notice, named itself lost); it goes with its lease.
  auto will = back.get("wills/x", 0ms);
  ASSERT_TRUE(will.ok()) << will.error().message();
  EXPECT_EQ(will->value_or("(absent)"), "1") << "a will of the ended run is left to its lease";
}

}  // namespace
}  // namespace aml::etcd
