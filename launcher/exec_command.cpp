#include "exec_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace aml {

std::vector<std::string> environ_with(const Env& base, const EnvList& added) {
  Env merged = base;
  for (const auto& [name, value] : added) merged[name] = value;
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
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
