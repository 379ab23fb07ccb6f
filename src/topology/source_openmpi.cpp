// Source 4: Open MPI (mpirun, Azure ML's MPI distribution). Ranks are assumed placed by slot,
// so node rank = rank / local size; OMPI_COMM_WORLD_NODE_RANK is a rank within the node, not a
// node index, and is never read.
#include "topology/master.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

constexpr int kAzureMpiDefaultPort = 6105;

bool present(const Env& env) { return has(env, "OMPI_COMM_WORLD_RANK"); }

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto fields =
      read_process_fields(env, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"});
  if (!fields) return fields.error();
  auto topology = process_level_topology(*fields, "openmpi");
  if (!topology) return topology.error();
  Topology& t = *topology;
  t.reason = "OMPI_COMM_WORLD_RANK is set: Open MPI started this process";

  // MASTER_ADDR, else Azure Batch's master node ("addr:port"; that port is Azure's, not ours).
  if (auto error = read_master_env(env, t, kAzureMpiDefaultPort)) return *error;
  for (std::string_view azure : {"AZ_BATCH_MASTER_NODE", "AZ_BATCHAI_MPI_MASTER_NODE"}) {
    if (!t.master_addr.empty()) break;
    auto addr = read_host(env, azure, /*port_allowed=*/true);
    if (!addr) return addr.error();
    t.master_addr = addr->value_or("");
  }
  return Detected{std::move(t), "MASTER_ADDR, AZ_BATCH_MASTER_NODE or AZ_BATCHAI_MPI_MASTER_NODE"};
}

}  // namespace

const Source kOpenMpiSource{"openmpi", present, read};

}  // namespace aml
