// Munge credentials (Slurm's authentication, DESIGN §5), through libmunge opened at run time:
// the release needs glibc alone, and an image without munge says so instead of failing to
// start. A credential seals a payload with the cluster's key and the caller's UID; munged
// decodes each credential once only (a replay is refused there).
#pragma once

#include <sys/types.h>

#include <aml/error.hpp>
#include <string>
#include <string_view>

namespace aml::store {

struct Unsealed {
  std::string payload;
  uid_t uid = 0;
};

// Whether libmunge opens and munged answers (an encode succeeds), with the reason where not.
Result<bool> munge_available();
// A fresh credential for this process's UID, sealing `payload`.
Result<std::string> munge_seal(std::string_view payload);
// What a credential seals and whose it is; an error for a forged, expired or replayed one.
Result<Unsealed> munge_unseal(const std::string& credential);

}  // namespace aml::store
