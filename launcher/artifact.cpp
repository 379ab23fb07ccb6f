#include "artifact.hpp"

#include <unistd.h>

#include <vector>

#ifndef AML_VERSION
#define AML_VERSION "unknown"
#endif
#ifndef AML_GIT_COMMIT
#define AML_GIT_COMMIT "unknown"
#endif
#ifndef AML_COMM_BACKENDS
#define AML_COMM_BACKENDS ""
#endif

namespace aml {
namespace {

std::string self_path() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
}

constexpr const char* kArchitecture =
#if defined(__x86_64__)
    "x86_64";
#elif defined(__aarch64__)
    "aarch64";
#else
    "this architecture";
#endif

bool has(const std::string& list, const std::string& word) {  // list: words and spaces
  return (" " + list + " ").find(" " + word + " ") != std::string::npos;
}

}  // namespace

std::string preflight_program() {
  const std::string self = self_path();
  if (self.empty()) return "aml-preflight";
  const std::size_t slash = self.rfind('/');
  const std::string dir = self.substr(0, slash + 1), name = self.substr(slash + 1);
  std::vector<std::string> candidates;
  if (name.starts_with("aml-launch-"))
    candidates.push_back(dir + "aml-preflight" + name.substr(10));
  candidates.push_back(dir + "aml-preflight");
  for (const std::string& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return candidates.back();
}

std::string version_line() {
  return std::string("aml-launch ") + AML_VERSION + " (commit " + AML_GIT_COMMIT + ")";
}

std::string version_text() {
  const std::string backends = AML_COMM_BACKENDS;
  std::string text = version_line() + "\ntarget: " + kArchitecture + " Linux" +
#ifdef AML_PORTABLE_BUILD
                     ", glibc 2.17 or newer (portable build)" +
#endif
                     "\naml::comm backends: " + (backends.empty() ? "none" : backends) + "\n";
  std::vector<std::string> how;
  if (has(backends, "gloo")) how.push_back("gloo built in");
  if (has(backends, "mpi")) how.push_back("mpi opens Open MPI's libmpi.so.40");
  if (has(backends, "nccl")) how.push_back("nccl opens libnccl.so.2 and libcuda.so.1");
  std::string ways;
  for (const std::string& h : how) ways += (ways.empty() ? "" : "; ") + h;
  const std::string preflight = preflight_program();
  if (access(preflight.c_str(), X_OK) == 0) {
    text +=
        "--preflight: " + preflight + " (" + (ways.empty() ? "no backends" : ways) +
        (has(backends, "mpi") || has(backends, "nccl") ? ", at run time where the image has them"
                                                       : "") +
        ")";
  } else {
    text += "--preflight: unavailable (" + preflight + " is missing)";
  }
  return text;
}

}  // namespace aml
