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

// Lets the port go (a round's ports once the round is over); a port not held is ignored.
void release_tcp_port(int port);

}  // namespace aml
