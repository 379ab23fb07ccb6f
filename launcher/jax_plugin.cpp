#include "jax_plugin.hpp"

#include <unistd.h>

#include <cstdlib>

#include "util/make_directories.hpp"
#include "util/replace_file.hpp"

namespace aml {

std::string jax_plugin_dir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  return base + "/aml-launch-" + std::to_string(getuid()) + "/jax-" + AML_VERSION;
}

Result<std::string> write_jax_plugin() {
  const std::string dir = jax_plugin_dir();
  if (!make_directories(dir)) {
    return invalid("--framework jax's folder", dir, "a folder this user can write");
  }
  if (!replace_file(dir + "/sitecustomize.py", kJaxClusterSource)) {
    return invalid("--framework jax's file", dir + "/sitecustomize.py",
                   "a file this user can write");
  }
  return dir;
}

}  // namespace aml
