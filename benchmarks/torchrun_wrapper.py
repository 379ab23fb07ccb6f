"""torchrun from Debian's python3-torch 1.13 on Python 3.11: Std.from_str("0") returns None
there (enum lookup changed), so torchrun crashes before it starts anything. This maps the
strings itself, then calls torchrun's own main. Only for the benchmarks."""
import re
import sys

from torch.distributed.elastic.multiprocessing import api


def from_str(value):
    if re.fullmatch(r"[0-3]", value):
        return api.Std(int(value))
    return {int(i): api.Std(int(v)) for i, v in (item.split(":") for item in value.split(","))}


api.Std.from_str = staticmethod(from_str)

from torch.distributed.run import main  # noqa: E402

sys.exit(main())
