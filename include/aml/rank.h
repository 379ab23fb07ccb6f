/* C ABI of the rank library, for C, Fortran (bind(C)) and Python ctypes.
   Integers are -1 when the environment is broken; aml_topology_error() then says why. */
#ifndef AML_RANK_H
#define AML_RANK_H

#ifdef __cplusplus
extern "C" {
#endif

int aml_is_master(void);
int aml_rank(void);
int aml_local_rank(void);
int aml_world_size(void);
int aml_local_world_size(void);
int aml_node_rank(void);
/* The DESIGN source id ("openmpi", "slurm", ...), or "" when the environment is broken. */
const char* aml_source(void);
/* NULL when the topology was read; otherwise a message naming the variable and its value. */
const char* aml_topology_error(void);
/* The whole topology as one JSON object: the job's fields as `aml-launch --dry-run --format json`
   prints them (source, reason, launch, nnodes, node_rank, nproc_per_node, world_size,
   master_addr, master_port), then run_id, role and this process's rank, local_rank,
   local_world_size, in_training_world and is_master. NULL when the environment is broken. */
const char* aml_topology_json(void);
/* Tells aml-launch's hang watch (--hang-timeout) that this rank is making progress; `step`
   (-1: none) is shown with it. One atomic add in memory, no system call: call it every step.
   Does nothing outside aml-launch. */
void aml_progress(long long step);

#ifdef __cplusplus
}
#endif

#endif /* AML_RANK_H */
