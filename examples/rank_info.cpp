// Prints where this process sits in the job, as the rank library sees it.
//   mpirun -np 4 aml-launch -- rank_info
#include <aml/rank.hpp>
#include <cstdio>

int main() {
  const auto& topology = aml::try_topology();
  if (!topology) {
    std::fprintf(stderr, "rank_info: %s\n", topology.error().message().c_str());
    return 2;
  }
  std::printf("rank %d of %d, local rank %d of %d, node %d, source %s, is_master %s\n", aml::rank(),
              aml::world_size(), aml::local_rank(), aml::local_world_size(), aml::node_rank(),
              topology->job.source.c_str(), aml::is_master() ? "true" : "false");
  return 0;
}
