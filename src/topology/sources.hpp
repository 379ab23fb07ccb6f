// The source table entries, one per file source_*.cpp, in DESIGN §2 order.
#pragma once

#include "topology/source.hpp"

namespace aml {

extern const Source kTorchrunSource;
extern const Source kAmlLaunchSource;
extern const Source kTfConfigSource;
extern const Source kOpenMpiSource;
extern const Source kMvapichSource;
extern const Source kMpichSource;
extern const Source kSlurmSource;
extern const Source kKubeflowSource;
extern const Source kTorchEnvProcessSource;
extern const Source kTorchEnvNodeSource;
extern const Source kSageMakerSource;
extern const Source kLsfSource;
extern const Source kStandaloneSource;

// Whether this process is a task of a Slurm job step (srun), not the batch script or salloc's
// shell (whose step ids are 0xfffffff0 and above, or words).
bool inside_slurm_step(const Env& env);

}  // namespace aml
