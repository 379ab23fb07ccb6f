/* The floor for launching: posix_spawn N copies of a command, wait for all. No environment
   work, no pipes, no supervision.   usage: spawn_floor N COMMAND [ARGS...] */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int n = atoi(argv[1]);
  for (int i = 0; i < n; ++i) {
    pid_t pid;
    if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0) return 127;
  }
  int status, failed = 0;
  while (wait(&status) > 0) failed |= !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return failed;
}
