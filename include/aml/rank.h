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

#ifdef __cplusplus
}
#endif

#endif /* AML_RANK_H */
