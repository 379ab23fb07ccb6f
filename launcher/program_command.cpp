#include "program_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/spawn.hpp"

namespace aml {
namespace {

bool is_file(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool can_run(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// Why the program gets Python, or "" when it runs as it is.
std::string needs_python(const ProgramOptions& program) {
  if (program.module) return "-m: " + program.words.front() + " is a Python module";
  if (program.no_python || program.words.empty()) return "";
  const std::string& first = program.words.front();
  const bool script = first.ends_with(".py");
  if (program.after_dashes) {
    return script && is_file(first) && !can_run(first)
               ? first + " is a Python script that cannot be run itself (not executable)"
               : "";
  }
  if (script) return first + " is a Python script";
  if (is_file(first) && !can_run(first)) {
    return first + " is a file that cannot be run itself (not executable): a Python script";
  }
  return "";
}

bool is_dir(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The Python of the virtual or conda environment whose bin/ holds aml-launch ("" if none).
std::string environment_python(const std::string& launcher_dir) {
  if (launcher_dir.empty()) return "";
  const std::string root = launcher_dir + "/..";
  if (!is_file(root + "/pyvenv.cfg") && !is_dir(root + "/conda-meta")) return "";
  for (const char* name : {"python3", "python"}) {
    const std::string path = launcher_dir + "/" + name;
    if (is_file(path) && can_run(path)) return path;
  }
  return "";
}

Result<std::string> python_interpreter(const Env& env, const std::string& launcher_dir,
                                       const std::string& why) {
  if (const std::string* chosen = find(env, "PYTHON_EXEC"); chosen && !chosen->empty()) {
    auto found = find_program(*chosen);
    if (!found) return invalid("PYTHON_EXEC", *chosen, "a Python interpreter that can run");
    return *found;
  }
  if (std::string own = environment_python(launcher_dir); !own.empty()) return own;
  for (const char* name : {"python3", "python"}) {
    if (auto found = find_program(name)) return *found;
  }
  const std::string* path = find(env, "PATH");
  return invalid("PATH", path ? *path : "",
                 "python3 or python on it: " + why +
                     ", and aml-launch has no Python of its own (set PYTHON_EXEC to the "
                     "interpreter, or give --no-python to run the program as it is)");
}

}  // namespace

std::string launcher_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "";
  const std::string exe(path, static_cast<std::size_t>(n));
  const auto slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

Result<ProgramCommand> program_command(const ProgramOptions& program, const Env& env,
                                       const std::function<std::string()>& launcher_dir) {
  ProgramCommand out;
  if (program.words.empty()) return out;
  const std::string why = needs_python(program);
  if (why.empty()) {
    out.argv = program.words;
    out.about =
        program.no_python ? "--no-python: the program runs as it is" : "the program runs as it is";
    return out;
  }
  auto python = python_interpreter(env, launcher_dir(), why);
  if (!python) return python.error();
  out.interpreter = *python;
  out.argv = {*python, "-u"};
  if (program.module) out.argv.push_back("-m");
  out.argv.insert(out.argv.end(), program.words.begin(), program.words.end());
  out.about = why + ": it runs under " + *python +
              " -u, as torchrun runs it (PYTHON_EXEC names another interpreter; else the "
              "Python of the virtual or conda environment aml-launch is installed in, else "
              "python3 on PATH; --no-python runs the program as it is)";
  return out;
}

}  // namespace aml
