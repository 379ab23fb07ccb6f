// A TCP port that is free on this host right now (the kernel picks it), held for this process.
#pragma once

#include <aml/error.hpp>

namespace aml {

// The port stays bound by this process (SO_REUSEADDR, never listening, closed at exec) until
// release_tcp_port or exit: no other pick on this host, this process's or another's, is given
// it in the moment before its user binds it (hundreds of launchers starting at once on one host
// did). Its user binds it with SO_REUSEADDR, as this project's listeners, torch's store, JAX's
// coordinator and TensorFlow's servers all do.
Result<int> free_tcp_port();

// Ports next to the workers' MASTER_PORT that this process never picks: code in the field
// hosts servers of its own on rank 0 at MASTER_PORT+k (Megatron-LM's in-process restart at +1
// and +2, MSCCL++'s bootstrap at +1), which find them free, as under torchrun.
inline constexpr int kPortsKeptFree = 16;
// From now on free_tcp_port picks none of port+1 to port+kPortsKeptFree (the last call counts).
void keep_ports_free_after(int port);

// Lets the port go (a round's ports once the round is over); a port not held is ignored.
void release_tcp_port(int port);

}  // namespace aml
