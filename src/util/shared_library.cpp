#include "util/shared_library.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace aml {

Result<void*> open_library(const LibrarySearch& search) {
  std::vector<std::string> names = search.names;
  const char* given = std::getenv(search.variable.c_str());
  if (given != nullptr && *given) names = {given};  // only what the user named
  std::string tried;
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL)) return handle;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why != nullptr ? why : name);
  }
  if (given != nullptr && *given) {
    return invalid(search.variable, given, search.what + " that opens (" + tried + ")");
  }
  return invalid(search.backend, search.what + " not found",
                 "it in this image (" + tried + "), or " + search.variable + " naming its path");
}

void* SymbolTable::find(const char* name) {
  void* symbol = dlsym(handle_, name);
  if (symbol == nullptr) missing_ += (missing_.empty() ? "" : ", ") + std::string(name);
  return symbol;
}

}  // namespace aml
