#include "exec_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

namespace aml {

// A merge of two sorted lists, not a copy of the map a worker: the launch builds one of these
// for each of its workers on the way to their spawn (a map copied and merged was 40 % of the
// supervisor's instructions for 8 workers of /bin/true).
std::vector<std::string> environ_with(const Env& base, const EnvList& added) {
  using Entry = std::pair<std::string, std::string>;
  std::vector<const Entry*> own;
  own.reserve(added.size());
  for (const Entry& entry : added) own.push_back(&entry);
  // By name; of one name set twice, the later stands (stable: the order they were set in).
  std::stable_sort(own.begin(), own.end(),
                   [](const Entry* a, const Entry* b) { return a->first < b->first; });
  std::vector<std::string> out;
  out.reserve(base.size() + own.size());
  auto emit = [&out](const std::string& name, const std::string& value) {
    std::string entry;
    entry.reserve(name.size() + 1 + value.size());
    entry.append(name).append(1, '=').append(value);
    out.push_back(std::move(entry));
  };
  auto next_base = base.begin();
  for (std::size_t i = 0; i < own.size(); ++i) {
    if (i + 1 < own.size() && own[i + 1]->first == own[i]->first) continue;  // set again later
    const std::string& name = own[i]->first;
    for (; next_base != base.end() && next_base->first < name; ++next_base) {
      emit(next_base->first, next_base->second);
    }
    if (next_base != base.end() && next_base->first == name) ++next_base;  // the worker's own
    emit(name, own[i]->second);
  }
  for (; next_base != base.end(); ++next_base) emit(next_base->first, next_base->second);
  return out;
}

// --exec: the command replaces aml-launch, as that one rank.
int exec_command(const LaunchPlan& plan, const Env& env) {
  if (plan.topology.launch != Launch::per_process) {
    std::cerr << "aml-launch: error: "
              << invalid("--exec", "set",
                         "a per-process launch (the scheduler started this rank); a per-node "
                         "launch has " +
                             std::to_string(plan.workers.size()) + " workers to supervise")
                     .message()
              << "\n";
    return 2;
  }
  std::vector<std::string> entries = environ_with(env, plan.workers.front().env);
  std::vector<char*> envp, argv;
  for (std::string& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> command = plan.command;
  for (std::string& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvpe(argv[0], argv.data(), envp.data());
  std::cerr << "aml-launch: cannot run " << command.front() << ": " << std::strerror(errno) << "\n";
  return 127;
}

}  // namespace aml
