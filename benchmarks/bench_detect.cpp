// Topology detection on the environment of a typical Azure ML PyTorch job: the cost that the
// launcher and every call into the rank library pay once.
#include <benchmark/benchmark.h>

#include "plan/launch_plan.hpp"
#include "topology/detect.hpp"

extern char** environ;

namespace {

aml::Env azure_ml_pytorch_env() {
  aml::Env env{
      {"MASTER_ADDR", "10.0.0.4"},
      {"MASTER_PORT", "6105"},
      {"WORLD_SIZE", "16"},
      {"NODE_RANK", "1"},
      {"RANK", "13"},
      {"LOCAL_RANK", "5"},
      {"AZUREML_RUN_ID", "sunny_lake_8x1k2l9"},
      {"AZUREML_ARM_SUBSCRIPTION", "00000000-0000-0000-0000-000000000000"},
      {"AZUREML_ARM_RESOURCEGROUP", "rg"},
      {"AZUREML_ARM_WORKSPACE_NAME", "ws"},
      {"AZUREML_ARM_PROJECT_NAME", "experiment"},
      {"AZUREML_CR_EXECUTION_WORKING_DIR_PATH", "/mnt/azureml/cr/j/abc/exe/wd"},
      {"AZ_BATCH_NODE_ROOT_DIR", "/mnt/batch/tasks"},
      {"AZ_BATCHAI_JOB_TEMP", "/mnt/batch/tasks/shared/tmp"},
      {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"},
      {"NCCL_DEBUG", "WARN"},
      {"NCCL_IB_PCI_RELAXED_ORDERING", "1"},
      {"PATH",
       "/opt/conda/bin:/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/"
       "usr/sbin:/usr/bin"},
      {"HOME", "/root"},
      {"HOSTNAME", "3f2a1c9e8d7b000001"},
      {"LANG", "C.UTF-8"},
      {"PYTHONUNBUFFERED", "1"},
  };
  // A real job carries many more variables than the sources read.
  for (int i = 0; i < 60; ++i)
    env["AZUREML_SETTING_" + std::to_string(i)] = "value-" + std::to_string(i);
  return env;
}

const aml::Machine kMachine{[] { return 8; }, [](const std::string&) { return std::nullopt; },
                            [] { return 96; }};

void BM_DetectAzureMlPyTorch(benchmark::State& state) {
  const aml::Env env = azure_ml_pytorch_env();
  for (auto _ : state) {
    auto topology = aml::detect_topology(env, kMachine);
    benchmark::DoNotOptimize(topology);
  }
}
BENCHMARK(BM_DetectAzureMlPyTorch);

void BM_DetectAndPlanPerNodeEightWorkers(benchmark::State& state) {
  aml::Env env = azure_ml_pytorch_env();
  // insert_or_assign rather than operator[] = "...": GCC 12 at -O3 warns (-Wrestrict) about the
  // inlined string assignment, a known false positive.
  env.insert_or_assign("WORLD_SIZE", std::string("2"));
  env.insert_or_assign("RANK", std::string("1"));
  env.insert_or_assign("LOCAL_RANK", std::string("0"));
  aml::Overrides flags{.nproc_per_node = 8};
  aml::PlanInputs inputs;
  inputs.cpu_count = 96;
  for (auto _ : state) {
    auto topology = aml::detect_topology(env, kMachine, flags);
    auto plan = aml::build_plan(*topology, inputs);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_DetectAndPlanPerNodeEightWorkers);

void BM_EnvFromEnviron(benchmark::State& state) {
  for (auto _ : state) {
    auto env = aml::env_from(environ);
    benchmark::DoNotOptimize(env);
  }
}
BENCHMARK(BM_EnvFromEnviron);

}  // namespace

BENCHMARK_MAIN();
