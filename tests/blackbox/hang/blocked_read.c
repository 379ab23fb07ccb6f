/* A native worker that hangs in read() on a pipe nobody writes to (rank 0), or in sleep. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void wait_for_input(int fd) {
  char byte;
  (void)read(fd, &byte, 1);
}

int main(void) {
  const char* rank = getenv("RANK");
  if (rank != NULL && strcmp(rank, "0") == 0) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    wait_for_input(fds[0]);
  } else {
    sleep(600);
  }
  return 0;
}
