// How a job admits only itself (DESIGN §5): the launcher's choice of authentication, from
// --rdzv-secret-file, AML_LAUNCH_SECRET_FILE or AML_LAUNCH_SECRET, else munge under Slurm
// where munged answers, else none (said plainly). The secret is held here and nowhere else:
// never printed, logged or passed on; what the others get is derived from it.
#pragma once

#include <aml/error.hpp>
#include <aml/store.hpp>
#include <functional>
#include <string>

#include "store/core/store_server.hpp"
#include "topology/env.hpp"

namespace aml {

inline constexpr std::string_view kSecretFileVariable = "AML_LAUNCH_SECRET_FILE";
inline constexpr std::string_view kSecretVariable = "AML_LAUNCH_SECRET";
inline constexpr std::string_view kRequireAuthVariable = "AML_LAUNCH_REQUIRE_AUTH";
// Shorter secrets are refused: a recorded handshake lets a short one be guessed offline.
inline constexpr std::size_t kMinSecretBytes = 16;

class JobAuth {
 public:
  enum class Source { none, secret_file, secret_environment, munge };

  // The mode from the flag's file (empty: none given) and the environment; `munge_works`
  // is asked only under Slurm (SLURM_JOB_ID) with no secret given.
  static Result<JobAuth> resolve(const std::string& secret_file, const Env& env,
                                 const std::function<Result<bool>()>& munge_works);

  Source source() const { return source_; }
  // "secret-file", "secret-env", "munge", "none": what --dry-run's JSON says.
  std::string mode() const;
  // For people: "a secret file (/run/secrets/job)", "munge (Slurm)", ...
  std::string description() const;
  store::AuthKind kind() const;
  // Where the secret's file can be read or replaced by other users of this machine: what, and
  // how to mend it; "" otherwise (and for a secret that is not a file's).
  const std::string& exposure() const { return exposure_; }

  // What node 0's store checks, and what a launcher or a worker of `job` proves itself with.
  store::ServerAuth server_auth(const std::string& job) const;
  StoreCredentials launcher_credentials(const std::string& job, const std::string& member) const;
  StoreCredentials worker_credentials(const std::string& job) const;

 private:
  Source source_ = Source::none;
  std::string where_;   // the file, or the variable
  std::string secret_;  // never shown
  std::string exposure_;
};

// Whether AML_LAUNCH_REQUIRE_AUTH asks for authentication (1, true, yes).
bool require_auth_from(const Env& env);

}  // namespace aml
