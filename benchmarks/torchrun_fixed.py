"""torchrun as Debian bookworm's python3-torch (1.13) ships it, with one fix to run at all under
Python 3.11: its Std.from_str compares the enum's members with an int, which Python 3.11 no
longer equates, so every launch fails (to_map(None): 'NoneType' object has no attribute 'get').
The benchmarks run torchrun's own main with that one function mended; nothing else changes.

usage: /usr/bin/python3 benchmarks/torchrun_fixed.py TORCHRUN-ARGS...
"""
from torch.distributed.elastic.multiprocessing import Std


def _from_str(vm):
    if ":" not in vm:
        return Std(int(vm))
    return {int(i): Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}


Std.from_str = staticmethod(_from_str)

if __name__ == "__main__":
    from torch.distributed.run import main
    main()
