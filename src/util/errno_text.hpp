// An errno value in words ("No such file or directory"). strerror in the launcher's "C" locale;
// glibc's strerrordesc_np is newer (2.32) than the glibc the portable binary may need (2.17).
#pragma once

#include <string.h>

#include <string>

namespace aml {

inline std::string errno_text(int error) { return strerror(error); }

}  // namespace aml
