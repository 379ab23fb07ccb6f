// The rank topology of a job as aml-launch detects it (DESIGN §2).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

// per_process: the scheduler started every rank; this process is one of them.
// per_node: one launcher per node spawns nproc_per_node workers.
enum class Launch { per_process, per_node };

std::string_view to_string(Launch launch);

// An elastic job (--nnodes MIN:MAX, Kubeflow's PET_NNODES=MIN:MAX): between min and max nodes,
// none with a fixed rank; each round's rendezvous gives the node count and the node ranks.
struct NodeRange {
  int min = 1;
  int max = 1;
};

struct Topology {
  std::string source;  // the DESIGN §2 source id: "openmpi", "torch-env", "slurm", ...
  std::string reason;  // which variables made that source match, for people
  Launch launch = Launch::per_node;

  int nnodes = 1;          // elastic: the most nodes, until a round's rendezvous
  int node_rank = 0;       // elastic: -1 until a round's rendezvous gives one
  int nproc_per_node = 1;  // the local world size
  int world_size = 1;      // elastic: -1 until a round's rendezvous
  std::optional<NodeRange> elastic;

  // This process's own place in a per-process launch. -1 in a per-node launch (the launcher
  // has no rank) and for TensorFlow `ps` / `evaluator` tasks, which are outside the training
  // world.
  int rank = -1;
  int local_rank = -1;
  std::string role = "default";  // ROLE_NAME: torchrun's "default", or the TF task type

  std::string master_addr;
  int master_port = 0;  // 0: none was given; the launcher picks a free one
  std::string run_id;   // the scheduler's job or run id, when it gives one
  // The job's round, as a worker's launcher tells it (aml-launch's, torchrun's): the restarts
  // so far. In an elastic job each round may have other nodes and another world size.
  int restart_count = 0;

  std::vector<std::string> notes;  // assumptions worth telling people (text output)

  bool in_training_world() const { return launch == Launch::per_node || rank >= 0; }
};

}  // namespace aml
