#include "util/write_all.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>

namespace aml {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool writev_all(int fd, iovec* pieces, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, pieces, count < IOV_MAX ? count : IOV_MAX);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    skip_written(pieces, count, static_cast<std::size_t>(n));
  }
  return true;
}

void skip_written(iovec*& pieces, int& count, std::size_t written) {
  while (count > 0 && written >= pieces->iov_len) {
    written -= pieces->iov_len;
    ++pieces;
    --count;
  }
  if (count > 0) {
    pieces->iov_base = static_cast<char*>(pieces->iov_base) + written;
    pieces->iov_len -= written;
  }
}

}  // namespace aml
