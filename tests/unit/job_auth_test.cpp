// Where a job's secret comes from, and what each side gets from it (store/launchers/job_auth.hpp).
#include "store/launchers/job_auth.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "store/launchers/handshake.hpp"

namespace aml {
namespace {

const std::string kSecret = "0123456789abcdef0123";

std::string secret_file(const std::string& content) {
  char path[] = "/tmp/aml-secret-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

Result<bool> munge_works() { return true; }
Result<bool> munge_missing() { return invalid("munge", "libmunge.so.2 not found", "it"); }

TEST(JobAuth, TheFlagsFileThenTheVariablesFileThenTheVariableThenMungeThenNone) {
  const std::string flag = secret_file(kSecret + "-flag\n");
  const std::string other = secret_file(kSecret + "-env-file");
  Env env{{"AML_LAUNCH_SECRET_FILE", other}, {"AML_LAUNCH_SECRET", kSecret}, {"SLURM_JOB_ID", "7"}};
  EXPECT_EQ(JobAuth::resolve(flag, env, munge_works)->mode(), "secret-file");
  EXPECT_EQ(JobAuth::resolve("", env, munge_works)->mode(), "secret-file");
  env.erase("AML_LAUNCH_SECRET_FILE");
  EXPECT_EQ(JobAuth::resolve("", env, munge_works)->mode(), "secret-env");
  env.erase("AML_LAUNCH_SECRET");
  EXPECT_EQ(JobAuth::resolve("", env, munge_works)->mode(), "munge");
  EXPECT_EQ(JobAuth::resolve("", env, munge_missing)->mode(), "none");
  env.erase("SLURM_JOB_ID");  // munge only under Slurm
  EXPECT_EQ(JobAuth::resolve("", env, munge_works)->mode(), "none");
  std::remove(flag.c_str());
  std::remove(other.c_str());
}

TEST(JobAuth, OneLineEndingIsNotPartOfTheSecret) {
  const std::string with = secret_file(kSecret + "\n"), without = secret_file(kSecret);
  auto a = JobAuth::resolve(with, {}, nullptr), b = JobAuth::resolve(without, {}, nullptr);
  EXPECT_EQ(a->server_auth("job").launcher_key, b->server_auth("job").launcher_key);
  auto c = JobAuth::resolve("", {{"AML_LAUNCH_SECRET", kSecret}}, nullptr);
  EXPECT_EQ(c->server_auth("job").worker_key, a->server_auth("job").worker_key);
  std::remove(with.c_str());
  std::remove(without.c_str());
}

TEST(JobAuth, AShortSecretOrAMissingFileIsAnErrorThatNeverShowsTheSecret) {
  auto short_one = JobAuth::resolve("", {{"AML_LAUNCH_SECRET", "tooshort"}}, nullptr);
  ASSERT_FALSE(short_one.ok());
  EXPECT_NE(short_one.error().message().find("at least 16 bytes"), std::string::npos);
  EXPECT_EQ(short_one.error().message().find("tooshort"), std::string::npos);
  auto missing = JobAuth::resolve("/nonexistent/secret", {}, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("--rdzv-secret-file=/nonexistent/secret"),
            std::string::npos)
      << missing.error().message();
}

TEST(JobAuth, WorkersGetTheirRolesKeyAndLaunchersTheirsNeverTheSecret) {
  auto auth = JobAuth::resolve("", {{"AML_LAUNCH_SECRET", kSecret}}, nullptr);
  ASSERT_TRUE(auth.ok());
  const StoreCredentials worker = auth->worker_credentials("job");
  const StoreCredentials launcher = auth->launcher_credentials("job", "node 1");
  EXPECT_EQ(worker.key, store::role_key(kSecret, "job", store::Role::worker));
  EXPECT_EQ(launcher.key, store::role_key(kSecret, "job", store::Role::launcher));
  EXPECT_FALSE(worker.launcher);
  EXPECT_TRUE(launcher.launcher);
  for (const std::string& shown : {worker.key, launcher.key, auth->description()}) {
    EXPECT_EQ(shown.find(kSecret), std::string::npos);
  }
  EXPECT_EQ(JobAuth::resolve("", {}, nullptr)->worker_credentials("job").kind,
            StoreCredentials::Kind::none);
}

TEST(JobAuth, RequireAuthFromTheEnvironment) {
  EXPECT_TRUE(require_auth_from({{"AML_LAUNCH_REQUIRE_AUTH", "1"}}));
  EXPECT_FALSE(require_auth_from({{"AML_LAUNCH_REQUIRE_AUTH", "0"}}));
  EXPECT_FALSE(require_auth_from({}));
}

// A secret file others can read, or whose folder others can write without the sticky bit, is
// said with the way to mend it; one only its owner can read, in a folder only it (or the
// sticky bit) guards, is not.
TEST(JobAuth, ASecretFileOthersCanReadOrReplaceIsSaid) {
  char folder[] = "/tmp/aml-secret-folder-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string root = folder;
  auto exposure = [&](const std::string& name, mode_t file_mode, mode_t folder_mode) {
    const std::string dir = root + "/" + name;
    mkdir(dir.c_str(), 0700);
    const std::string path = dir + "/secret";
    std::ofstream(path, std::ios::binary) << kSecret;
    chmod(path.c_str(), file_mode);
    chmod(dir.c_str(), folder_mode);
    auto auth = JobAuth::resolve(path, {}, nullptr);
    EXPECT_TRUE(auth.ok()) << name;
    std::string said = auth.ok() ? auth->exposure() : "";
    chmod(dir.c_str(), 0700);
    unlink(path.c_str());
    rmdir(dir.c_str());
    return said;
  };
  EXPECT_EQ(exposure("owner-only", 0600, 0700), "");
  EXPECT_EQ(exposure("read-only", 0400, 0755), "");
  EXPECT_EQ(exposure("sticky-folder", 0600, 01777), "");
  const std::string readable = exposure("readable", 0644, 0700);
  EXPECT_NE(readable.find("(mode 0644) can be read by other users"), std::string::npos) << readable;
  EXPECT_NE(readable.find("chmod 600 " + root + "/readable/secret"), std::string::npos) << readable;
  EXPECT_NE(exposure("group-readable", 0640, 0700).find("mode 0640"), std::string::npos);
  const std::string open_folder = exposure("open-folder", 0600, 0777);
  EXPECT_NE(open_folder.find("its folder " + root + "/open-folder (mode 0777) can be written"),
            std::string::npos)
      << open_folder;
  rmdir(root.c_str());
}

TEST(JobAuth, AFileTooLargeForASecretIsRefused) {
  auto zero = JobAuth::resolve("/dev/zero", {}, nullptr);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message().find("at most 64 KiB"), std::string::npos)
      << zero.error().message();
}

}  // namespace
}  // namespace aml
