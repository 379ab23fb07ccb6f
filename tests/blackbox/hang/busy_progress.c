/* A worker that computes for 3 s without a word, calling aml_progress() every step: not hung. */
#include <aml/rank.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  long long step = 0;
  volatile double sum = 0;
  do {
    for (int i = 0; i < 10000; ++i) sum += i * 0.5;
    aml_progress(++step);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec - start.tv_sec < 3);
  printf("done after %lld steps (%g)\n", step, sum);
  return 0;
}
