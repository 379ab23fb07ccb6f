#include "worker_torch.hpp"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

namespace aml {
namespace {

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}
std::string last_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
bool regular_file_at(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool python_name(const std::string& path) {
  static const std::regex name("python[0-9.]*");
  return std::regex_match(last_name(path), name);
}

// `name` as the shell finds it on the environment's PATH ("" where it is not there).
std::string found_on_path(const std::string& name, const Env& env) {
  if (name.find('/') != std::string::npos) return regular_file_at(name) ? name : "";
  const auto path = env.find("PATH");
  if (path == env.end()) return "";
  std::size_t from = 0;
  while (from <= path->second.size()) {
    std::size_t to = path->second.find(':', from);
    if (to == std::string::npos) to = path->second.size();
    const std::string dir = to > from ? path->second.substr(from, to - from) : ".";
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && regular_file_at(candidate)) return candidate;
    from = to + 1;
  }
  return "";
}

// The Python a program runs under: a python itself, or its #! line's ("#!/usr/bin/env python3").
std::string python_of(const std::vector<std::string>& command, const std::string& interpreter,
                      const Env& env) {
  if (!interpreter.empty()) return found_on_path(interpreter, env);
  if (command.empty()) return "";
  const std::string program = found_on_path(command[0], env);
  if (program.empty()) return "";
  if (python_name(program)) return program;
  std::ifstream in(program, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || line.rfind("#!", 0) != 0) return "";
  std::istringstream words(line.substr(2));
  std::string first, second;
  words >> first >> second;
  if (last_name(first) == "env") return python_name(second) ? found_on_path(second, env) : "";
  return python_name(first) ? found_on_path(first, env) : "";
}

std::vector<std::string> python_versions_under(const std::string& lib) {
  std::vector<std::string> out;
  if (DIR* dir = opendir(lib.c_str())) {
    static const std::regex versioned("python3\\.[0-9]+");
    while (dirent* e = readdir(dir)) {
      if (std::regex_match(e->d_name, versioned)) out.emplace_back(e->d_name);
    }
    closedir(dir);
  }
  return out;
}

// Where that Python's sys.path would find packages, in its order.
std::vector<std::string> package_dirs(const std::string& python, const Env& env) {
  std::vector<std::string> dirs;
  if (auto pythonpath = env.find("PYTHONPATH"); pythonpath != env.end()) {
    std::size_t from = 0;
    while (from <= pythonpath->second.size()) {
      std::size_t to = pythonpath->second.find(':', from);
      if (to == std::string::npos) to = pythonpath->second.size();
      if (to > from) dirs.push_back(pythonpath->second.substr(from, to - from));
      from = to + 1;
    }
  }
  // A virtual environment: its own packages, and its base's only where it says so.
  const std::string venv = parent_dir(parent_dir(python));
  bool base_too = true;
  std::ifstream cfg(venv + "/pyvenv.cfg");
  if (cfg) {
    for (const std::string& v : python_versions_under(venv + "/lib")) {
      dirs.push_back(venv + "/lib/" + v + "/site-packages");
    }
    std::string line;
    base_too = false;
    while (std::getline(cfg, line)) {
      static const std::regex system("\\s*include-system-site-packages\\s*=\\s*true\\s*");
      if (std::regex_match(line, system)) base_too = true;
    }
  }
  if (!base_too) return dirs;
  char real[PATH_MAX];
  if (realpath(python.c_str(), real) == nullptr) return dirs;
  const std::string prefix = parent_dir(parent_dir(real));
  const std::vector<std::string> versions = python_versions_under(prefix + "/lib");
  if (!cfg) {
    if (auto home = env.find("HOME"); home != env.end()) {
      for (const std::string& v : versions)
        dirs.push_back(home->second + "/.local/lib/" + v + "/site-packages");
    }
  }
  for (const std::string& v : versions) {
    dirs.push_back(prefix + "/local/lib/" + v + "/dist-packages");  // Debian's pip
    dirs.push_back(prefix + "/lib/" + v + "/site-packages");
    dirs.push_back(prefix + "/lib/" + v + "/dist-packages");
  }
  dirs.push_back(prefix + "/lib/python3/dist-packages");  // Debian's packages
  return dirs;
}

}  // namespace

std::optional<TorchFound> worker_torch(const std::vector<std::string>& command,
                                       const std::string& interpreter, const Env& env) {
  const std::string python = python_of(command, interpreter, env);
  if (python.empty()) return std::nullopt;
  static const std::regex version_line("__version__\\s*=\\s*['\"]([^'\"]+)['\"].*");
  for (const std::string& dir : package_dirs(python, env)) {
    const std::string file = dir + "/torch/version.py";
    std::ifstream in(file);
    std::string line;
    std::smatch m;
    while (in && std::getline(in, line)) {
      if (std::regex_match(line, m, version_line)) return TorchFound{m[1], file};
    }
  }
  return std::nullopt;
}

bool torch_at_least(const std::string& version, int major, int minor) {
  int got_major = 0, got_minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &got_major, &got_minor) != 2) return false;
  return got_major != major ? got_major > major : got_minor >= minor;
}

}  // namespace aml
