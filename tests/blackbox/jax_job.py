# A JAX job of the JAX tests: jax.distributed.initialize() with no arguments, then a psum
# across every process (JAX's CPU collectives over Gloo), or process 1 failing with an exception
# or leaving by sys.exit(3) while the others wait for it in a collective, or process 1 stuck
# before it, when asked. Each process says what JAX told it. Every process first catches a
# sys.exit(4) of its own, which must change nothing.
import os
import sys
import time

import jax

jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize()
import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
me = jax.process_index()
print(f"jax process {me} of {jax.process_count()} rank {os.environ.get('RANK')}", flush=True)
try:  # as a program that calls argparse and catches its SystemExit
    sys.exit(4)
except SystemExit:
    pass
if mode == "fails" and me == 1:
    time.sleep(1)
    raise RuntimeError("process 1 gives up")
if mode == "exits" and me == 1:
    time.sleep(1)
    print("process 1 leaves by sys.exit(3)", flush=True)
    sys.exit(3)



def load_batch():
    time.sleep(600)  # stuck: the others wait for it in the collective below


if mode == "hangs" and me == 1:
    load_batch()
gathered = multihost_utils.process_allgather(jnp.array([me + 1.0]))
print(f"jax process {me} psum {float(gathered.sum())}", flush=True)
