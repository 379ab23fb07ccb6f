#include "supervisor/output_stream.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

namespace aml {
namespace {

constexpr int kPipeReadsPerWakeup = 8;  // then let the other workers' pipes have their turn

}  // namespace

std::size_t OutputStream::drain() {
  std::span<char> buffer = relay_read_buffer();
  std::size_t got = 0;
  for (int reads = 0; reads < kPipeReadsPerWakeup && pipe_; ++reads) {
    ssize_t n = ::read(pipe_.get(), buffer.data(), buffer.size());
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      relay_.consume(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) < buffer.size()) return got;  // empty for now
    } else if (n == 0) {
      finish();
    } else if (errno != EINTR) {
      if (errno != EAGAIN) finish();
      return got;
    }
  }
  return got;
}

void OutputStream::finish() {
  relay_.finish();
  if (epoll_fd_ >= 0) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, pipe_.get(), nullptr);
  pipe_.reset();
}

}  // namespace aml
