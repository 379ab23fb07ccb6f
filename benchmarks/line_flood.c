/* Writes COUNT lines of exactly 100 bytes (a number, padding, newline) to stdout in 64 KiB
   writes: the worker of the relay benchmark.   usage: line_flood COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  long count = atol(argv[1]);
  static char buffer[65536];
  size_t used = 0;
  for (long i = 0; i < count; ++i) {
    char* line = buffer + used;
    memset(line, 'x', 99);
    int n = snprintf(line, 24, "%ld ", i);
    line[n] = ' ';
    line[99] = '\n';
    used += 100;
    if (used + 100 > sizeof(buffer)) {
      if (write(1, buffer, used) != (ssize_t)used) return 3;
      used = 0;
    }
  }
  if (used && write(1, buffer, used) != (ssize_t)used) return 3;
  return 0;
}
