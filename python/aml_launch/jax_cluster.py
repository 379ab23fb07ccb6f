"""JAX's cluster detection for the workers aml-launch starts (docs/guides/jax.md).

`jax.distributed.initialize()` with no arguments asks each of JAX's cluster environments in
turn whether it is the one (Open MPI, Slurm, ...); under a launcher that started several workers
per scheduler task, those would give the scheduler's view (2 Slurm tasks where 16 workers run).
This module adds one that gives the launcher's view, ahead of JAX's own: the process count, this
process's id and the coordinator, from the variables aml-launch set for the worker
(JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_COORDINATOR_ADDRESS, the names Kubeflow Trainer uses).

A process that fails with an exception ends at once with status 1, and one that leaves by
sys.exit(n) or exit(n), n not 0, ends at once with n, instead of waiting in JAX's shutdown
barrier (up to its shutdown_timeout, 300 s) for processes that are themselves waiting for it:
the launcher then stops the job and names it. A sys.exit the program catches changes nothing.

aml-launch --framework jax puts this file first on the workers' PYTHONPATH as `sitecustomize`:
Python runs it at start, before any of the program's code. It imports nothing of JAX: it waits
for JAX's clusters module to be imported and registers then, and it runs the sitecustomize it
stands in front of, if there is one. In a worker that never imports JAX it does nothing.
"""
import atexit
import builtins
import importlib.machinery
import importlib.util
import os
import sys

_CLUSTERS = "jax._src.clusters"


def _present():
    env = os.environ
    return env.get("AML_LAUNCH_WORKER") == "1" and all(
        name in env for name in ("JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"))


_ending = []  # the status of a process ending failed: an exception or a sys.exit nobody caught
_armed = []


def _status_of(code):  # as the process's exit status: 0-255, as Python would end it
    if code is None:
        return 0
    return code & 0xFF if isinstance(code, int) else 1  # a message: Python printed it


class _SysExit(SystemExit):
    """sys.exit's exception in an armed process. Python drops one that nobody caught at the
    top, with no frame of Python's above: then it is the process's status. One the program
    caught is dropped in the program's own frame and means nothing."""

    def __del__(self):
        if sys._getframe().f_back is None:
            _ending.append(_status_of(self.code))


def _end_a_failed_process():
    status = _ending[-1] if _ending else 0
    if status:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _arm():
    # Registered when initialize() asks, after JAX's own clean-up (at `import jax`): atexit runs
    # the last registered first, so this one runs before JAX's shutdown barrier.
    if _armed:
        return
    _armed.append(True)
    hook = sys.excepthook

    def excepthook(kind, value, traceback):
        _ending.append(1)
        hook(kind, value, traceback)

    sys.excepthook = excepthook

    def exit(status=None):
        raise _SysExit(status)

    exit.__doc__ = sys.exit.__doc__
    sys.exit = exit
    for name in ("exit", "quit"):  # site's exit() and quit(), where a script calls them
        if callable(getattr(builtins, name, None)):
            setattr(builtins, name, _Quitter(getattr(builtins, name)))
    atexit.register(_end_a_failed_process)


class _Quitter:
    """site's exit() and quit() for an armed process: the same, with sys.exit's exception."""

    def __init__(self, quitter):
        self._quitter = quitter

    def __repr__(self):
        return repr(self._quitter)

    def __call__(self, code=None):
        try:  # as site's does: a shell that catches SystemExit sees its stdin closed
            sys.stdin.close()
        except Exception:
            pass
        raise _SysExit(code)


def register(clusters):
    """Adds aml-launch's environment to JAX's `clusters` module, ahead of the others."""
    base = clusters.ClusterEnv
    if any(getattr(c, "name", "") == "aml_launch" for c in base._cluster_types):
        return

    class AmlLaunchCluster(base):
        name = "aml_launch"

        @classmethod
        def is_env_present(cls):
            return _present()

        @classmethod
        def get_coordinator_address(cls, timeout_secs=None, override_coordinator_port=None):
            address = os.environ["JAX_COORDINATOR_ADDRESS"]
            if override_coordinator_port:
                address = address.rsplit(":", 1)[0] + ":" + str(override_coordinator_port)
            return address

        @classmethod
        def get_process_count(cls):
            _arm()
            return int(os.environ["JAX_NUM_PROCESSES"])

        @classmethod
        def get_process_id(cls):
            return int(os.environ["JAX_PROCESS_ID"])

        @classmethod
        def get_local_process_id(cls):
            # The devices are JAX_LOCAL_DEVICE_IDS's, where the launcher knows the GPUs; else all.
            return None

    base._cluster_types.remove(AmlLaunchCluster)
    base._cluster_types.insert(0, AmlLaunchCluster)


class _AfterClusters:
    """Registers once JAX's clusters module has run: a finder that wraps its loader."""

    def find_spec(self, name, path=None, target=None):
        if name != _CLUSTERS:
            return None
        sys.meta_path.remove(self)  # one look: the spec below is found the usual way
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            register(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    """Registers now if JAX's clusters module is loaded, else when it is."""
    if _CLUSTERS in sys.modules:
        register(sys.modules[_CLUSTERS])
    elif not any(isinstance(f, _AfterClusters) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterClusters())


def _run_the_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if __name__ == "sitecustomize":
    if _present():
        install()
    _run_the_next_sitecustomize()
