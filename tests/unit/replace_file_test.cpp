#include "util/replace_file.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace aml {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/replace-file-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    DIR* dir = opendir(path.c_str());
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
    return names;
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReplaceFile, ReplacesTheWholeContentAndLeavesNothingElse) {
  TempDir dir;
  const std::string path = dir.path + "/summary.json";
  ASSERT_TRUE(replace_file(path, "a long first version\n"));
  ASSERT_TRUE(replace_file(path, "short\n"));
  EXPECT_EQ(read(path), "short\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"summary.json"});
}

TEST(ReplaceFile, ThroughASymbolicLinkTheFileItNamesIsReplaced) {
  TempDir dir;
  ASSERT_TRUE(replace_file(dir.path + "/real.json", "old\n"));
  ASSERT_EQ(symlink("real.json", (dir.path + "/link.json").c_str()), 0);
  ASSERT_TRUE(replace_file(dir.path + "/link.json", "new\n"));
  EXPECT_EQ(read(dir.path + "/real.json"), "new\n");
  char target[64] = {};
  EXPECT_GT(readlink((dir.path + "/link.json").c_str(), target, sizeof(target) - 1), 0);
  EXPECT_STREQ(target, "real.json");
}

TEST(ReplaceFile, APipeIsWrittenAsItIs) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_TRUE(replace_file("/proc/self/fd/" + std::to_string(fds[1]), "through\n"));
  char got[16] = {};
  EXPECT_EQ(::read(fds[0], got, sizeof(got)), 8);
  EXPECT_STREQ(got, "through\n");
  close(fds[0]);
  close(fds[1]);
}

TEST(ReplaceFile, NoSuchDirectoryIsAnError) {
  errno = 0;
  EXPECT_FALSE(replace_file("/proc/no-such-dir/summary.json", "x"));
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace aml
