/* Prints what the C ABI of the rank library says, for the C ABI tests. */
#include <aml/rank.h>
#include <stdio.h>

int main(void) {
  const char* error = aml_topology_error();
  printf(
      "source=%s rank=%d local_rank=%d world_size=%d local_world_size=%d node_rank=%d is_master=%d "
      "error=%s\n",
      aml_source(), aml_rank(), aml_local_rank(), aml_world_size(), aml_local_world_size(),
      aml_node_rank(), aml_is_master(), error ? error : "none");
  return 0;
}
