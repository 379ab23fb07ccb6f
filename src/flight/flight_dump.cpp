#include "flight/flight_dump.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>

#include "flight/pickle_subset.hpp"

namespace aml {

FlightDump::Asked FlightDump::ask() {
  // Non-blocking: no reader is ENXIO, not a wait.
  const int fd = open(pipe_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    struct stat st;
    const bool fifo = errno == ENXIO && stat(pipe_.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
    return fifo ? Asked::unanswered : Asked::no_pipe;
  }
  unlink(path_.c_str());
  size_ = -1;
  asked_ = write(fd, "1\n", 2) == 2 || asked_;
  close(fd);
  return Asked::yes;
}

std::optional<Result<nlohmann::json>> FlightDump::read_if_grown() {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0 || st.st_size == size_) return std::nullopt;
  size_ = st.st_size;
  const PickleLimits limits;
  if (static_cast<std::size_t>(st.st_size) > limits.max_bytes) {
    return Result<nlohmann::json>(invalid("flight recorder dump", "a pickle",
                                          std::to_string(st.st_size) + " bytes, past the " +
                                              std::to_string(limits.max_bytes) +
                                              " a dump is read up to"));
  }
  std::ifstream in(path_, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return read_pickle_subset(bytes, limits);
}

}  // namespace aml
