"""The rank library (libaml_rank, shipped beside this file) through its C ABI."""
import ctypes
import json
import os


class TopologyError(RuntimeError):
    """The environment describes no valid job; the message names the variable, its value and
    what was expected, as aml-launch prints it."""


def _load():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libaml_rank.so")
    if not os.path.exists(path):
        raise ImportError(f"aml_launch: the rank library is missing: {path}")
    lib = ctypes.CDLL(path)
    for name in ("aml_source", "aml_topology_error", "aml_topology_json"):
        getattr(lib, name).restype = ctypes.c_char_p
    lib.aml_progress.argtypes = [ctypes.c_longlong]
    lib.aml_progress.restype = None
    return lib


_lib = _load()
_cached = None  # the library reads the environment once, at the first call; so do we


def _read():
    global _cached
    if _cached is None:
        text = _lib.aml_topology_json()
        if text is None:
            message = (_lib.aml_topology_error() or b"aml: the topology could not be read").decode()
            _cached = TopologyError(message[len("aml: "):] if message.startswith("aml: ") else message)
        else:
            _cached = json.loads(text)
    if isinstance(_cached, TopologyError):
        raise TopologyError(str(_cached))
    return _cached


def topology():
    """This process's topology as a dict: the job's fields as `aml-launch --dry-run --format json`
    prints them (source, reason, launch, nnodes, node_rank, nproc_per_node, world_size,
    master_addr, master_port), then run_id, role, rank, local_rank, local_world_size,
    in_training_world and is_master. Raises TopologyError when the environment is broken."""
    return dict(_read())


def is_master():
    """True exactly for global rank 0 of the training world (TensorFlow: the chief, or worker 0
    when there is no chief); True without any distributed environment; False when the
    environment is broken (topology() then raises TopologyError saying why)."""
    return bool(_lib.aml_is_master())


def rank():
    """The global rank. Raises TopologyError when the environment is broken."""
    return _read()["rank"]


def local_rank():
    """The rank among this node's processes."""
    return _read()["local_rank"]


def world_size():
    """The number of processes in the training world."""
    return _read()["world_size"]


def local_world_size():
    """The number of processes on this node."""
    return _read()["local_world_size"]


def node_rank():
    """The index of this node."""
    return _read()["node_rank"]


def progress(step=-1):
    """Tells aml-launch's hang watch (--hang-timeout) that this rank is making progress, as
    output does: a rank that computes without printing is then not taken for hung. `step` (an
    int, -1 for none) is shown in the hang report. An atomic add in memory shared with the
    launcher, no system call: call it every step. Does nothing outside aml-launch."""
    _lib.aml_progress(int(step))
