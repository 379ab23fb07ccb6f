#include "rank/process_view.hpp"

namespace aml {

ProcessTopology process_view(const Topology& job) {
  ProcessTopology p;
  p.job = job;
  p.node_rank = job.node_rank;
  if (job.launch == Launch::per_process) {
    p.rank = job.rank;
    p.local_rank = job.local_rank;
    p.local_world_size = job.nproc_per_node;
    p.world_size = job.world_size;
    p.in_training_world = job.rank >= 0;
  } else {
    p.rank = job.node_rank;
    p.local_rank = 0;
    p.local_world_size = 1;
    p.world_size = job.nnodes;
  }
  return p;
}

}  // namespace aml
