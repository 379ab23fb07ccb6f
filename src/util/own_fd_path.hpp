// The path that names what one of our descriptors refers to (/proc/self/fd/N): opening it
// gives a new description of the same file or pipe, even if the file's name has moved.
#pragma once

#include <string>

namespace aml {

inline std::string own_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace aml
