#include "topology/env.hpp"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace aml {

const std::string* find(const Env& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

bool has(const Env& env, std::string_view name) { return env.find(name) != env.end(); }

Env env_from(char** environ_block) {
  Env env;
  for (char** entry = environ_block; entry && *entry; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  }
  return env;
}

namespace {

int count_nvidia_devices() {
  DIR* dir = opendir("/dev");
  if (dir == nullptr) return 0;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    // /dev/nvidia0, /dev/nvidia1, ... but not nvidiactl, nvidia-uvm, nvidia-modeset.
    const char* name = entry->d_name;
    if (std::strncmp(name, "nvidia", 6) != 0 || name[6] == '\0') continue;
    bool digits = true;
    for (const char* c = name + 6; *c; ++c)
      digits = digits && std::isdigit(static_cast<unsigned char>(*c));
    count += digits ? 1 : 0;
  }
  closedir(dir);
  return count;
}

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

int allowed_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

}  // namespace

Machine real_machine() { return Machine{count_nvidia_devices, read_whole_file, allowed_cpus}; }

}  // namespace aml
