// A vendor library opened at run time (dlopen), so that nothing needs MPI, NCCL, a GPU driver
// or munge to start: aml::comm, aml-preflight and the store's handshake use them where the
// image has them, and say exactly what was missing where it has not.
#pragma once

#include <aml/error.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aml {

struct LibrarySearch {
  std::string backend;             // whose library, for messages: "mpi"
  std::string what;                // "Open MPI's libmpi.so.40"
  std::string variable;            // a path given by the user wins: AML_MPI_LIBRARY
  std::vector<std::string> names;  // else the first of these that opens (sonames or paths)
};

// The handle (RTLD_NOW | RTLD_GLOBAL: Open MPI's own plugins resolve against it), or an error
// that names every place tried and why each failed. Never closed: the backends keep using it.
Result<void*> open_library(const LibrarySearch& search);

// Looks up symbols into their slots, and remembers the ones the library lacks.
class SymbolTable {
 public:
  explicit SymbolTable(void* handle) : handle_(handle) {}
  template <class T>
  void bind(T& slot, const char* name) {
    slot = reinterpret_cast<T>(find(name));
  }
  // "" when every symbol was found, else their names: "ncclCommInitRankConfig, ...".
  const std::string& missing() const { return missing_; }

 private:
  void* find(const char* name);
  void* handle_;
  std::string missing_;
};

// A table of a library's functions, loaded on first use and kept for the process; a failed
// load is tried again next time (the variable naming the library may have been set since).
template <class Api, class Load>
Result<const Api*> load_once(Load load) {
  static std::mutex mutex;
  static std::optional<Api> loaded;
  std::lock_guard lock(mutex);
  if (!loaded) {
    Result<Api> api = load();
    if (!api) return api.error();
    loaded = *api;
  }
  return &*loaded;
}

}  // namespace aml
