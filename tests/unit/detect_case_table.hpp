// The detection table's rows: one environment each, the topology (or the error) it must give.
// The rows live by family (detect_cases_*.cpp); detect_cases_test.cpp runs them all.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "topology/detect.hpp"

namespace aml::detect_cases {

constexpr Launch PP = Launch::per_process;
constexpr Launch PN = Launch::per_node;
constexpr int kAnyPort = -1;

struct Expect {
  std::string source;
  Launch launch;
  int nnodes, node_rank, nproc_per_node, world_size;
  int rank;  // per-process: this process's rank; per-node: the first worker's rank
  std::string master_addr;
  int master_port;
};

struct Case {
  std::string name;
  Env env;
  Overrides flags = {};
  std::optional<Expect> expect = std::nullopt;
  std::string error_variable = {};                 // the variable the error must name
  int gpus = 0;                                    // /dev/nvidia* devices on the fake machine
  std::optional<std::string> file = std::nullopt;  // what the fake machine's files hold
};

inline Case ok(std::string name, Env env, Expect expect, Overrides flags = {}, int gpus = 0) {
  return Case{std::move(name), std::move(env), flags, std::move(expect), {}, gpus};
}
inline Case bad(std::string name, Env env, std::string variable, Overrides flags = {}) {
  return Case{std::move(name), std::move(env), flags, std::nullopt, std::move(variable)};
}
inline Overrides nproc(int n) { return Overrides{.nproc_per_node = n}; }

inline const std::string kTf2 =
    R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"]}, "task": {"type": "worker", "index": 1}})";

inline Env ompi(int rank, int size, int local_rank, int local_size) {
  return {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_SIZE", std::to_string(size)},
          {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(local_rank)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local_size)}};
}
// A worker that aml-launch started, rank `rank` of `local_size` on one node.
inline Env aml_worker(int rank, int local_size) {
  return {{"AML_LAUNCH_WORKER", "1"},
          {"RANK", std::to_string(rank)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(local_size)},
          {"LOCAL_WORLD_SIZE", std::to_string(local_size)},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "41000"}};
}
inline Env with(Env env, Env more) {
  for (auto& [k, v] : more) env[k] = v;
  return env;
}
inline Env slurm(std::string procid, std::string ntasks, std::string localid, std::string nodeid,
                 std::string tasks_per_node, std::string nodelist) {
  return {{"SLURM_JOB_ID", "123456"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", procid},
          {"SLURM_NTASKS", ntasks},
          {"SLURM_LOCALID", localid},
          {"SLURM_NODEID", nodeid},
          {"SLURM_STEP_TASKS_PER_NODE", tasks_per_node},
          {"SLURM_STEP_NODELIST", nodelist}};
}

// gtest prints a failing row with this instead of its bytes.
inline void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

// Standalone, torchrun, aml-launch's own workers, TF_CONFIG.
std::vector<Case> framework_cases();
// Open MPI, MPICH / MVAPICH, Slurm, LSF.
std::vector<Case> hpc_scheduler_cases();
// Kubeflow, torch env:// (Azure ML PyTorch), SageMaker.
std::vector<Case> cloud_cases();

}  // namespace aml::detect_cases
