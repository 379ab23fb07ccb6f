// The health checks (src/health/) against a /sys tree of fixtures and the NVML stand-in
// (tests/health/nvml_stand_in.c), opened through the same run-time loading as the driver's.
#include "health/health_checks.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fixture_paths.hpp"

namespace aml {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class HealthChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/aml-health-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    settings_.machine_root = root_;
    settings_.automatic = false;
    setenv("AML_NVML_LIBRARY", aml::test::nvml_stand_in_library(), 1);
    setenv("AML_NVML_STAND_IN", (root_ + "/nvml").c_str(), 1);
  }
  void TearDown() override {
    fs::remove_all(root_);
    unsetenv("AML_NVML_STAND_IN");
  }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  // An HCA's port as /sys shows it.
  void port(const std::string& hca, int n, const std::string& state, const std::string& phys,
            int link_downed = 0, int symbol_errors = 0) {
    const std::string at = "/sys/class/infiniband/" + hca + "/ports/" + std::to_string(n);
    write(at + "/state", state + "\n");
    write(at + "/phys_state", phys + "\n");
    write(at + "/rate", "200 Gb/sec (4X HDR)\n");
    write(at + "/counters/link_downed", std::to_string(link_downed) + "\n");
    write(at + "/counters/symbol_error", std::to_string(symbol_errors) + "\n");
  }
  void gpus(int count) {
    for (int i = 0; i < count; ++i) write("/dev/nvidia" + std::to_string(i), "");
    write("/dev/nvidiactl", "");
  }
  // Gone, or a zombie that nobody has reaped yet (its shell, its parent, died first).
  static bool ended(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
  }
  std::string root_;
  HealthSettings settings_;
  HealthLooks looks_;
};

TEST_F(HealthChecks, ActivePortsPass) {
  port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp");
  port("mlx5_1", 1, "4: ACTIVE", "5: LinkUp");
  const HealthResult result = check_nics(settings_, looks_);
  EXPECT_TRUE(result.ok) << result.figure;
  EXPECT_NE(result.figure.find("2 ports ACTIVE and LinkUp"), std::string::npos) << result.figure;
}

TEST_F(HealthChecks, APortDownFailsNamingIt) {
  port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp");
  port("mlx5_1", 1, "1: DOWN", "3: Disabled");
  const HealthResult result = check_nics(settings_, looks_);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("mlx5_1/1 is DOWN (not ACTIVE)"), std::string::npos)
      << result.figure;
  EXPECT_NE(result.figure.find("mlx5_1/1's link is Disabled"), std::string::npos) << result.figure;
  EXPECT_EQ(result.figure.find("mlx5_0"), std::string::npos) << result.figure;
}

TEST_F(HealthChecks, OnlyThePortsNcclUsesCount) {
  port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp");
  port("mlx5_1", 1, "1: DOWN", "3: Disabled");
  settings_.nic_filter = {"mlx5_0"};
  EXPECT_TRUE(check_nics(settings_, looks_).ok);
  settings_.nic_filter = {"^mlx5_0"};
  EXPECT_FALSE(check_nics(settings_, looks_).ok);
  settings_.nic_filter = {"=mlx5_2"};
  const HealthResult none = check_nics(settings_, looks_);
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.figure.find("no InfiniBand/RoCE port that NCCL_IB_HCA names"), std::string::npos);
}

TEST_F(HealthChecks, ALinkThatWentDownBetweenLooksFails) {
  port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", 3, 10);
  EXPECT_TRUE(check_nics(settings_, looks_).ok);       // the first look: counters as found
  EXPECT_TRUE(check_nics(settings_, looks_).ok);       // steady
  port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", 4, 10);  // it flapped, and is up again
  const HealthResult flapped = check_nics(settings_, looks_);
  EXPECT_FALSE(flapped.ok);
  EXPECT_NE(flapped.figure.find("mlx5_0/1's link_downed grew from 3 to 4"), std::string::npos)
      << flapped.figure;
  EXPECT_TRUE(check_nics(settings_, looks_).ok);  // steady again since that look
}

TEST_F(HealthChecks, AutoLooksOnlyAtWhatTheNodeHas) {
  settings_.automatic = true;
  EXPECT_TRUE(run_health_checks(settings_, looks_).results.empty());  // a CPU node pays nothing
  port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp");
  HealthReport report = run_health_checks(settings_, looks_);
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_EQ(report.results[0].check, "nic");
  gpus(2);
  write("/nvml", "count 2\n");
  report = run_health_checks(settings_, looks_);
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.results[0].check, "gpu");
  EXPECT_TRUE(report.results[0].ok) << report.results[0].figure;
  EXPECT_EQ(report.failure(), "");
}

TEST_F(HealthChecks, HealthyGpusPass) {
  gpus(8);
  write("/nvml", "count 8\n");
  const HealthResult result = check_gpus(settings_, looks_);
  EXPECT_TRUE(result.ok) << result.figure;
  EXPECT_NE(result.figure.find("8 GPUs answer"), std::string::npos) << result.figure;
}

TEST_F(HealthChecks, AMissingGpuFails) {
  gpus(8);
  write("/nvml", "count 7\n");
  HealthResult result = check_gpus(settings_, looks_);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("8 GPUs expected (/dev/nvidia*), NVML sees 7"), std::string::npos)
      << result.figure;
  settings_.visible_gpus = std::vector<std::string>{"0", "1", "7"};
  result = check_gpus(settings_, looks_);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("GPU 7 does not answer"), std::string::npos) << result.figure;
  settings_.visible_gpus = std::vector<std::string>{"0", "1"};
  EXPECT_TRUE(check_gpus(settings_, looks_).ok);
}

TEST_F(HealthChecks, EachGpuFaultIsNamed) {
  gpus(4);
  write("/nvml", "count 4\nrecovery 1 1\necc 2 3\nremap_pending 3\nslowdown 0 40\n");
  const HealthResult result = check_gpus(settings_, looks_);
  EXPECT_FALSE(result.ok);
  for (const char* said :
       {"GPU 1: the driver's recovery action is reset the GPU (1)",
        "GPU 2: 3 volatile uncorrectable ECC errors", "GPU 3: a row remap is pending",
        "GPU 0: hardware or thermal slowdown (clock event reasons 0x40)"}) {
    EXPECT_NE(result.figure.find(said), std::string::npos) << said << " in " << result.figure;
  }
  write("/nvml", "count 4\nrecovery 2 2\nremap_failed 0\n");
  const HealthResult again = check_gpus(settings_, looks_);
  EXPECT_NE(again.figure.find("GPU 2: the driver's recovery action is reboot the node"),
            std::string::npos)
      << again.figure;
  EXPECT_NE(again.figure.find("GPU 0: a row remap failed"), std::string::npos) << again.figure;
}

TEST_F(HealthChecks, AnXidSinceTheLastLookFailsOnce) {
  gpus(2);
  write("/nvml", "count 2\n");
  EXPECT_TRUE(check_gpus(settings_, looks_).ok);  // registers for Xid events
  write("/nvml", "count 2\nxid 1 79\n");
  const HealthResult result = check_gpus(settings_, looks_);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("Xid 79 since the last look"), std::string::npos) << result.figure;
  EXPECT_TRUE(check_gpus(settings_, looks_).ok);  // read once: none since
}

TEST_F(HealthChecks, AutoGoesOnWithoutTheDriverSayingSo) {
  gpus(2);  // device files, but no NVML to open: a CPU job's container on a GPU node
  setenv("AML_NVML_LIBRARY", (root_ + "/no-such-libnvidia-ml.so.1").c_str(), 1);
  settings_.automatic = true;
  HealthReport report = run_health_checks(settings_, looks_);
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_TRUE(report.results[0].ok);
  EXPECT_TRUE(report.results[0].figure.starts_with("skipped (auto): no NVIDIA driver here"))
      << report.results[0].figure;
  settings_.automatic = false;
  settings_.gpu = true;  // asked for by name: a failure
  report = run_health_checks(settings_, looks_);
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_FALSE(report.results[0].ok);
}

TEST_F(HealthChecks, NoDriverIsSaidPlainly) {
  gpus(1);
  setenv("AML_NVML_LIBRARY", (root_ + "/no-such-libnvidia-ml.so.1").c_str(), 1);
  HealthLooks fresh;
  const HealthResult result = check_gpus(settings_, fresh);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("no NVIDIA driver here"), std::string::npos) << result.figure;
  EXPECT_NE(result.figure.find("AML_NVML_LIBRARY"), std::string::npos) << result.figure;
}

TEST_F(HealthChecks, PathsMustBeWritableWithRoom) {
  fs::create_directories(root_ + "/scratch");
  HealthResult result = check_path(settings_, root_ + "/scratch");
  EXPECT_TRUE(result.ok) << result.figure;
  EXPECT_TRUE(fs::is_empty(root_ + "/scratch"));  // its probe is gone
  settings_.min_free_bytes = ~0ull;
  result = check_path(settings_, root_ + "/scratch");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("free (below"), std::string::npos) << result.figure;
  settings_.min_free_bytes = 0;
  result = check_path(settings_, root_ + "/missing");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("cannot be looked at"), std::string::npos) << result.figure;
  result = check_path(settings_, "/proc/self");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("not writable"), std::string::npos) << result.figure;
  // /proc answers open() with "No such file or directory": the figure names the real reason.
  result = check_path(settings_, "/proc");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("the kernel's process file system"), std::string::npos)
      << result.figure;
  EXPECT_EQ(result.figure.find("No such file"), std::string::npos) << result.figure;
  std::ofstream(root_ + "/a-file") << "x";
  result = check_path(settings_, root_ + "/a-file");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("not a folder"), std::string::npos) << result.figure;
}

TEST_F(HealthChecks, TheCommandsExitAndLastLinesAreItsVerdict) {
  settings_.health_command = "echo looking; echo fine";
  HealthResult result = check_command(settings_);
  EXPECT_TRUE(result.ok) << result.figure;
  EXPECT_EQ(result.figure, "exit 0: looking | fine");
  settings_.health_command = "echo a; echo b; echo c; echo 'scratch is full' >&2; exit 3";
  result = check_command(settings_);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.figure, "exit 3: b | c | scratch is full");
}

TEST_F(HealthChecks, ACommandPastItsBoundIsKilledWithWhatItLeft) {
  settings_.bound = milliseconds(300);
  settings_.health_command = "sleep 30 & echo $! > " + root_ + "/left; sleep 30";
  const auto start = std::chrono::steady_clock::now();
  const HealthResult result = check_command(settings_);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.figure.find("did not end within --health-timeout"), std::string::npos);
  std::ifstream left(root_ + "/left");
  long pid = 0;
  ASSERT_TRUE(left >> pid);
  usleep(100000);
  EXPECT_TRUE(ended(pid)) << "its background child was left running";
}

TEST_F(HealthChecks, ACommandThatLeavesAChildHoldingItsOutputStillEnds) {
  settings_.health_command = "sleep 30 & echo $! > " + root_ + "/left; echo done";
  const auto start = std::chrono::steady_clock::now();
  const HealthResult result = check_command(settings_);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_TRUE(result.ok) << result.figure;
  std::ifstream left(root_ + "/left");
  long pid = 0;
  ASSERT_TRUE(left >> pid);
  usleep(100000);
  EXPECT_TRUE(ended(pid)) << "its background child was left running";
}

TEST_F(HealthChecks, ALookThatHangsFailsAtTheBound) {
  gpus(1);
  write("/nvml", "count 1\nhang\n");
  settings_.gpu = true;
  settings_.bound = milliseconds(200);
  HealthWatch watch(settings_);
  const auto start = std::chrono::steady_clock::now();
  const HealthReport report = watch.verdict();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_NE(report.first_failure(), nullptr);
  EXPECT_NE(report.failure().find("no answer within --health-timeout"), std::string::npos)
      << report.failure();
  write("/nvml", "count 1\n");
  const HealthReport later = watch.verdict();  // a new look with state of its own
  EXPECT_EQ(later.failure(), "") << later.failure();
}

// The threads of this process but the calling one that leave SIGCHLD unblocked: a SIGCHLD
// that one of them took was lost to the launcher's signalfd (a worker's exit never seen).
std::vector<std::string> threads_taking_sigchld() {
  std::vector<std::string> taking;
  const std::string self = std::to_string(static_cast<long>(syscall(SYS_gettid)));
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    const std::string id = task.path().filename();
    if (id == self) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (!line.starts_with("SigBlk:")) continue;
      const unsigned long long blocked = std::stoull(line.substr(7), nullptr, 16);
      if ((blocked & (1ULL << (SIGCHLD - 1))) == 0) taking.push_back(id);
    }
  }
  return taking;
}

TEST_F(HealthChecks, ALooksThreadsTakeNoSignal) {
  // As in the launcher while its rendezvous runs (the next look begins then): SIGCHLD
  // unblocked in the thread that begins the look.
  sigset_t child, previous;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  pthread_sigmask(SIG_UNBLOCK, &child, &previous);
  settings_.health_command = "sleep 1";  // its thread beside the look's, both alive a while
  settings_.command = true;
  HealthWatch watch(settings_);
  watch.begin();
  usleep(200000);
  EXPECT_EQ(threads_taking_sigchld(), std::vector<std::string>{});
  // A look that hangs leaves its thread behind for good.
  gpus(1);
  write("/nvml", "count 1\nhang\n");
  settings_.health_command.clear();
  settings_.command = false;
  settings_.gpu = true;
  settings_.bound = milliseconds(200);
  HealthWatch hung(settings_);
  ASSERT_NE(hung.verdict().first_failure(), nullptr);
  EXPECT_EQ(threads_taking_sigchld(), std::vector<std::string>{});
  (void)watch.verdict();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  write("/nvml", "count 1\n");  // the hung look ends
}

TEST_F(HealthChecks, TheWordsOfHealthChecks) {
  HealthSettings s;
  EXPECT_EQ(read_health_checks("gpu,paths", s), std::nullopt);
  EXPECT_TRUE(s.gpu && s.paths && !s.nic && !s.command && !s.automatic);
  EXPECT_EQ(read_health_checks("none", s), std::nullopt);
  EXPECT_TRUE(s.none());
  EXPECT_EQ(read_health_checks("auto", s), std::nullopt);
  EXPECT_TRUE(s.automatic);
  auto wrong = read_health_checks("gpu,disk", s);
  ASSERT_TRUE(wrong);
  EXPECT_NE(wrong->find("(not \"disk\")"), std::string::npos);
}

}  // namespace
}  // namespace aml
