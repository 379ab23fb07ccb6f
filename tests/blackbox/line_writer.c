/* Test worker: writes COUNT numbered lines to stdout or stderr in odd-sized chunks that split
   lines anywhere, then kills itself with SIGKILL (nothing of its own left to flush), or with
   a last argument "exit" exits 0 instead.
   usage: line_writer COUNT out|err text|binary [exit] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) return 2;
  long count = atol(argv[1]);
  int fd = strcmp(argv[2], "err") == 0 ? 2 : 1;
  int binary = strcmp(argv[3], "binary") == 0;
  static char buffer[1 << 20];
  size_t used = 0;
  for (long i = 1; i <= count; ++i) {
    /* Binary lines carry bytes that are not UTF-8 (0xff, 0xfe, 0x80) and a NUL. */
    int n = binary ? snprintf(buffer + used, 64, "line %ld \xff\xfe\x80", i)
                   : snprintf(buffer + used, 64, "line %ld", i);
    used += (size_t)n;
    if (binary) buffer[used++] = '\0';
    buffer[used++] = '\n';
    if (used > sizeof(buffer) - 128) {
      /* 4093-byte writes: line boundaries fall anywhere inside a chunk. */
      for (size_t off = 0; off < used;) {
        size_t len = used - off < 4093 ? used - off : 4093;
        ssize_t w = write(fd, buffer + off, len);
        if (w <= 0) return 3;
        off += (size_t)w;
      }
      used = 0;
    }
  }
  for (size_t off = 0; off < used;) {
    ssize_t w = write(fd, buffer + off, used - off < 4093 ? used - off : 4093);
    if (w <= 0) return 3;
    off += (size_t)w;
  }
  if (argc == 5 && strcmp(argv[4], "exit") == 0) return 0;
  raise(SIGKILL);
  return 0;
}
