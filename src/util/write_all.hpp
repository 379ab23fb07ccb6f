// Writes that finish: partial writes and EINTR are retried.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <string_view>

namespace aml {

// False when the descriptor refused (EPIPE, ENOSPC, ...); errno says why.
bool write_all(int fd, std::string_view data);
// The same for several pieces in one system call where the kernel takes them all.
bool writev_all(int fd, iovec* pieces, int count);
// After a writev took `written` bytes: the pieces still to write.
void skip_written(iovec*& pieces, int& count, std::size_t written);

}  // namespace aml
