// A native (C++) worker that hangs in read() on a pipe nobody writes to (rank 0), or in sleep.
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace {

__attribute__((noinline)) void wait_for_input(int fd) {
  char byte;
  (void)read(fd, &byte, 1);
}

}  // namespace

int main() {
  const char* rank = std::getenv("RANK");
  if (rank != nullptr && std::string_view(rank) == "0") {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    wait_for_input(fds[0]);
  } else {
    sleep(600);
  }
  return 0;
}
