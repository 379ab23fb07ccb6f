// The environment as a value: parsers read this map and never call getenv.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace aml {

using Env = std::map<std::string, std::string, std::less<>>;

// The variable's value, or nullptr when it is not set.
const std::string* find(const Env& env, std::string_view name);
bool has(const Env& env, std::string_view name);

// A copy of a process environment (`environ`), for the launcher and the rank library.
Env env_from(char** environ_block);

// Facts about the machine that are not in the environment, injected so that detection stays
// testable: the real side reads /dev and files, a test gives fixed answers.
struct Machine {
  std::function<int()> nvidia_device_count;  // /dev/nvidia[0-9]* devices
  std::function<std::optional<std::string>(const std::string& path)> read_file;
  std::function<int()> cpu_count;  // CPUs this process may run on
};

Machine real_machine();

}  // namespace aml
