#include "store/launchers/munge_credential.hpp"

#include <cstdlib>

#include "util/shared_library.hpp"

namespace aml::store {
namespace {

// libmunge's C ABI (munge.h), declared here: the portable build sees no host headers.
using MungeError = int;  // munge_err_t, 0 is EMUNGE_SUCCESS
using MungeContext = void*;
constexpr int kMungeOptionSocket = 8;  // MUNGE_OPT_SOCKET
struct MungeApi {
  MungeError (*encode)(char** credential, MungeContext, const void* payload, int length);
  MungeError (*decode)(const char* credential, MungeContext, void** payload, int* length,
                       uid_t* uid, gid_t* gid);
  const char* (*strerror)(MungeError);
  MungeContext (*context_create)();
  MungeError (*context_set)(MungeContext, int option, ...);
  void (*context_destroy)(MungeContext);
};

Result<MungeApi> load_munge() {
  auto handle = open_library(LibrarySearch{
      "munge", "libmunge.so.2", "AML_MUNGE_LIBRARY", {"libmunge.so.2", "libmunge.so"}});
  if (!handle) return handle.error();
  MungeApi api{};
  SymbolTable symbols(*handle);
  symbols.bind(api.encode, "munge_encode");
  symbols.bind(api.decode, "munge_decode");
  symbols.bind(api.strerror, "munge_strerror");
  symbols.bind(api.context_create, "munge_ctx_create");
  symbols.bind(api.context_set, "munge_ctx_set");
  symbols.bind(api.context_destroy, "munge_ctx_destroy");
  if (!symbols.missing().empty()) {
    return invalid("munge", "a libmunge without " + symbols.missing(), "libmunge.so.2 (MUNGE 0.5)");
  }
  return api;
}

Result<const MungeApi*> munge() { return load_once<MungeApi>(load_munge); }

// munged's socket: AML_MUNGE_SOCKET where a cluster runs it elsewhere than munge's default
// (as Slurm's AuthInfo=socket= says), else the default (no context).
class Context {
 public:
  explicit Context(const MungeApi& api) : api_(api) {
    const char* socket = std::getenv("AML_MUNGE_SOCKET");
    if (socket == nullptr || *socket == '\0') return;
    context_ = api_.context_create();
    if (context_ != nullptr) (void)api_.context_set(context_, kMungeOptionSocket, socket);
  }
  ~Context() {
    if (context_ != nullptr) api_.context_destroy(context_);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  MungeContext get() const { return context_; }

 private:
  const MungeApi& api_;
  MungeContext context_ = nullptr;
};

std::string error_text(const MungeApi& api, MungeError e) {
  const char* text = api.strerror(e);
  return text != nullptr ? text : "munge error " + std::to_string(e);
}

}  // namespace

Result<std::string> munge_seal(std::string_view payload) {
  auto api = munge();
  if (!api) return api.error();
  char* credential = nullptr;
  Context context(**api);
  MungeError e =
      (*api)->encode(&credential, context.get(), payload.data(), static_cast<int>(payload.size()));
  if (e != 0) {
    std::free(credential);
    return invalid("munge", "munge_encode: " + error_text(**api, e),
                   "munged running and reachable");
  }
  std::string sealed(credential);
  std::free(credential);
  return sealed;
}

Result<Unsealed> munge_unseal(const std::string& credential) {
  auto api = munge();
  if (!api) return api.error();
  void* payload = nullptr;
  int length = 0;
  Unsealed out;
  gid_t gid = 0;
  Context context(**api);
  MungeError e =
      (*api)->decode(credential.c_str(), context.get(), &payload, &length, &out.uid, &gid);
  if (payload != nullptr && length > 0)
    out.payload.assign(static_cast<const char*>(payload), length);
  std::free(payload);
  if (e != 0)
    return invalid("munge credential", error_text(**api, e), "a valid, unused credential");
  return out;
}

Result<bool> munge_available() {
  auto sealed = munge_seal("aml-launch probe");
  if (!sealed) return sealed.error();
  return true;
}

}  // namespace aml::store
