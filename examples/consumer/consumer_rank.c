/* The rank library from C, built with pkg-config:
   cc consumer_rank.c $(pkg-config --cflags --libs aml-rank) */
#include <aml/rank.h>
#include <stdio.h>

int main(void) {
  printf("consumer_rank: rank %d of %d, master %d\n", aml_rank(), aml_world_size(),
         aml_is_master());
  return 0;
}
