// torch's own clients, replayed against the launcher's torch door (DESIGN §3): conversations of
// torch 1.13's and 2.11's TCPStore clients with torch's own servers, recorded through a proxy
// (fixtures/torch-store/), are sent again, connection by connection and in the recorded
// pieces, and every answer is compared, byte for byte, with what torch's server said.
// The ranks of a recording run side by side, as they did; their ADDs are taken in the
// recorded order (a barrier's count says who came first), which is what makes the answers
// comparable at all.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fixture_paths.hpp"
#include "store/core/store_host.hpp"
#include "store/torch/torch_wire.hpp"
#include "torch_raw_client.hpp"

namespace aml {
namespace {

namespace fs = std::filesystem;
using store::torch::Decoded;
using store::torch::Op;
using torch_raw::connect_to;

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes.substr(0, 64)) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return bytes.size() > 64 ? out + "..." : out;
}

std::int64_t i64_at(const std::string& bytes, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return static_cast<std::int64_t>(v);
}

// One step of a connection: what the client sent at once, and what the server answered
// before the client sent more.
struct Step {
  std::string sent;
  std::string answered;
};

std::vector<Step> steps_of(const fs::path& file) {
  std::ifstream in(file);
  const nlohmann::json chunks = nlohmann::json::parse(in);
  std::vector<Step> steps;
  for (const auto& chunk : chunks) {
    const std::string direction = chunk.at(0).get<std::string>();
    const std::string bytes = unhex(chunk.at(1).get<std::string>());
    if (direction == "c") {
      if (steps.empty() || !steps.back().answered.empty()) steps.push_back({});
      steps.back().sent += bytes;
    } else {
      if (steps.empty()) steps.push_back({});
      steps.back().answered += bytes;
    }
  }
  return steps;
}

// The counters the ranks ADD to, as the replay has taken them so far.
class Counters {
 public:
  // Waits until `key` holds `value` (at least that, for a read: an ADD of 0).
  bool wait_for(const std::string& key, std::int64_t value, bool at_least) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] {
      const std::int64_t now = values_[key];
      return at_least ? now >= value : now == value;
    });
  }
  void set(const std::string& key, std::int64_t value) {
    {
      std::lock_guard lock(mutex_);
      values_[key] = std::max(values_[key], value);
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::int64_t> values_;
};

// Reads `want` bytes, or what came within the time.
std::string read_bytes(int fd, std::size_t want, int timeout_ms) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (got.size() < want) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buffer[65536];
    const ssize_t n = recv(fd, buffer, std::min(sizeof(buffer), want - got.size()), 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got;
}

std::vector<std::string> listed_keys(const std::string& answer) {
  std::vector<std::string> keys;
  std::size_t at = 8;
  for (std::int64_t i = 0; i < i64_at(answer, 0) && at + 8 <= answer.size(); ++i) {
    const auto length = static_cast<std::size_t>(i64_at(answer, at));
    keys.push_back(answer.substr(at + 8, length));
    at += 8 + length;
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Replays one connection; what differed from the recording, one line each.
std::vector<std::string> replay(const fs::path& file, int port, Counters& counters) {
  std::vector<std::string> wrong;
  const std::string name = file.filename().string();
  int fd = connect_to(port);
  if (fd < 0) return {name + ": could not connect"};
  auto dialect = store::torch::Dialect::legacy;
  bool first = true;
  int index = 0;
  for (const Step& step : steps_of(file)) {
    ++index;
    // What the client sent, as requests: an ADD waits for its turn, a LIST_KEYS is compared
    // as a set (torch's order is its hash table's).
    std::vector<store::torch::Request> requests;
    for (std::string_view rest = step.sent; !rest.empty();) {
      Decoded d = store::torch::decode(rest, dialect, first, {});
      if (d.outcome != store::torch::Outcome::request) break;
      requests.push_back(d.request);
      dialect = d.dialect;
      first = false;
      rest.remove_prefix(d.used);
    }
    const bool one_add =
        requests.size() == 1 && requests[0].op == Op::add && step.answered.size() == 8;
    if (one_add) {
      const std::int64_t recorded = i64_at(step.answered, 0);
      const bool read_only = requests[0].number == 0;
      counters.wait_for(requests[0].keys[0], recorded - requests[0].number, read_only);
    }
    if (send(fd, step.sent.data(), step.sent.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(step.sent.size())) {
      wrong.push_back(name + " step " + std::to_string(index) + ": could not send");
      break;
    }
    const std::string got = read_bytes(fd, step.answered.size(), 10000);
    if (one_add && got.size() == 8) {
      const std::int64_t value = i64_at(got, 0);
      counters.set(requests[0].keys[0], value);
      // A read of a counter that others go on adding to may see more than it saw then.
      if (requests[0].number == 0 && value >= i64_at(step.answered, 0)) continue;
    }
    const bool list = requests.size() == 1 && requests[0].op == Op::list_keys;
    if (list ? listed_keys(got) != listed_keys(step.answered) : got != step.answered) {
      wrong.push_back(name + " step " + std::to_string(index) + " (" +
                      (requests.empty() ? "?" : store::torch::op_name(requests[0].op)) +
                      "): answered " + hex(got) + ", torch's server " + hex(step.answered));
    }
  }
  // Nothing more than torch's server said (a reply to a SET would be a client's desync).
  const std::string extra = read_bytes(fd, 1, 200);
  if (!extra.empty()) wrong.push_back(name + ": answered more than torch's server did");
  close(fd);
  return wrong;
}

// Relayed: every connection goes through a node's relay (store/relay/worker_store_relay.hpp), as a
// worker on any node but node 0's does.
void replay_workload(const std::string& version, const std::string& workload,
                     bool relayed = false) {
  const fs::path folder = fs::path(aml::test::torch_store_fixtures()) / version;
  std::vector<fs::path> connections;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string file = entry.path().filename().string();
    if (file.starts_with(workload + "-conn") && file.ends_with(".json")) {
      connections.push_back(entry.path());
    }
  }
  ASSERT_FALSE(connections.empty()) << folder;
  auto served = StoreHost::start_workers_store(
      "127.0.0.1", 0, std::make_shared<store::AdmittedHosts>(), "the replay's store", "test");
  ASSERT_TRUE(served.ok()) << served.error().message();
  std::unique_ptr<RelayHost> relay;
  if (relayed) {
    auto started = RelayHost::start("127.0.0.1", (*served)->port(), "127.0.0.1", 0);
    ASSERT_TRUE(started.ok()) << started.error().message();
    relay = std::move(*started);
  }
  const int port = relayed ? relay->port() : (*served)->port();
  Counters counters;
  std::vector<std::vector<std::string>> wrong(connections.size());
  std::vector<std::thread> ranks;
  for (std::size_t i = 0; i < connections.size(); ++i) {
    ranks.emplace_back([&, i] { wrong[i] = replay(connections[i], port, counters); });
  }
  for (auto& rank : ranks) rank.join();
  for (const auto& lines : wrong) {
    for (const auto& line : lines) ADD_FAILURE() << version << " " << line;
  }
}

TEST(TorchStoreReplay, Torch211GlooTwoRanks) { replay_workload("2.11.0", "gloo"); }
TEST(TorchStoreReplay, Torch211Nccl) { replay_workload("2.11.0", "nccl"); }
TEST(TorchStoreReplay, Torch211EveryCallOfTheStoreApi) { replay_workload("2.11.0", "api"); }
TEST(TorchStoreReplay, Torch113GlooTwoRanksWithTheirIdleConnections) {
  replay_workload("1.13.0", "gloo");
}
TEST(TorchStoreReplay, Torch113EveryCallOfTheStoreApi) { replay_workload("1.13.0", "api"); }
TEST(TorchStoreReplay, Torch211GlooTwoRanksThroughARelay) {
  replay_workload("2.11.0", "gloo", true);
}
TEST(TorchStoreReplay, Torch211NcclThroughARelay) { replay_workload("2.11.0", "nccl", true); }
TEST(TorchStoreReplay, Torch211EveryCallOfTheStoreApiThroughARelay) {
  replay_workload("2.11.0", "api", true);
}
TEST(TorchStoreReplay, Torch113GlooTwoRanksWithTheirIdleConnectionsThroughARelay) {
  replay_workload("1.13.0", "gloo", true);
}
TEST(TorchStoreReplay, Torch113EveryCallOfTheStoreApiThroughARelay) {
  replay_workload("1.13.0", "api", true);
}

}  // namespace
}  // namespace aml
