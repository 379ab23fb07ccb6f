"""aml-launch from Python: this process's place in a distributed training job.

    import aml_launch
    if aml_launch.is_master():
        save_checkpoint()

The topology is read from the environment the scheduler or launcher set (aml-launch, torchrun,
Open MPI, Slurm, TF_CONFIG, Kubeflow, Azure ML, ...) by the same C++ library the aml-launch
executable uses: the same sources, the same precedence, the same error messages.
"""
from ._notice import notice
from ._rank import (
    TopologyError,
    is_master,
    local_rank,
    local_world_size,
    node_rank,
    progress,
    rank,
    topology,
    world_size,
)

__all__ = [
    "TopologyError",
    "is_master",
    "local_rank",
    "local_world_size",
    "node_rank",
    "notice",
    "progress",
    "rank",
    "topology",
    "world_size",
]
