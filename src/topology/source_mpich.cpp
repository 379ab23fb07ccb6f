// Source 5: MPICH / Intel MPI (Hydra's PMI_* and MPI_LOCAL*) and MVAPICH2 (MV2_COMM_WORLD_*).
#include "topology/master.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

Result<Detected> finish(const Env& env, Result<ProcessFields> fields, const char* source,
                        const char* reason) {
  if (!fields) return fields.error();
  auto topology = process_level_topology(*fields, source);
  if (!topology) return topology.error();
  if (auto error = read_master_env(env, *topology)) return *error;
  topology->reason = reason;
  return Detected{std::move(*topology)};
}

bool mvapich_present(const Env& env) { return has(env, "MV2_COMM_WORLD_RANK"); }

Result<Detected> mvapich_read(const DetectContext& ctx) {
  return finish(
      ctx.env,
      read_process_fields(ctx.env, {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
                                    "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"}),
      "mvapich", "MV2_COMM_WORLD_RANK is set: MVAPICH2 started this process");
}

bool mpich_present(const Env& env) { return has(env, "PMI_RANK") && has(env, "PMI_SIZE"); }

Result<Detected> mpich_read(const DetectContext& ctx) {
  return finish(
      ctx.env,
      read_process_fields(ctx.env, {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"}),
      "mpich", "PMI_RANK and PMI_SIZE are set: an MPICH (Hydra) launcher started this process");
}

}  // namespace

// MVAPICH2 may also set PMI_RANK, so it is asked first.
const Source kMvapichSource{"mvapich", mvapich_present, mvapich_read};
const Source kMpichSource{"mpich", mpich_present, mpich_read};

}  // namespace aml
