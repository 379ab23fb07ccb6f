// What a store server is told: which door it keeps (DESIGN §3, §5), who may come in, and the
// bounds that keep one client from costing the others.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "store/core/refusal_log.hpp"
#include "store/launchers/handshake.hpp"
#include "store/launchers/wire.hpp"
#include "store/torch/admitted_hosts.hpp"
#include "store/torch/torch_doorway.hpp"
#include "store/torch/torch_wire.hpp"

namespace aml::store {

// How clients prove they belong to the job (store/launchers/handshake.hpp).
struct ServerAuth {
  AuthKind kind = AuthKind::none;
  std::string launcher_key;  // kind key: role_key(secret, job, launcher)
  std::string worker_key;    // kind key: role_key(secret, job, worker)
};

// Which protocol a server's clients speak: its door over the core (store_door.hpp).
enum class Door : std::uint8_t {
  aml,    // the launchers' own (launchers/launchers_door.hpp): every client proves itself
  torch,  // torch's TCPStore (torch/torch_door.hpp): the workers' own store calls, by address
};

struct ServerOptions {
  Door door = Door::aml;
  // torch's door: the job's hosts; a connection from anywhere else is closed at accept.
  std::shared_ptr<const AdmittedHosts> admitted;
  // aml's door: where each proven launcher's address goes (the workers' door admits it).
  std::shared_ptr<AdmittedHosts> vouched;
  // aml's door: the connections at its socket that speak torch go through it to the round's
  // workers' store (torch_doorway.hpp); none: its socket is the launchers' alone.
  std::shared_ptr<TorchDoorway> torch_doorway;
  torch::Limits torch_limits;
  std::string token;  // every client must present it in HELLO: the job's public id
  ServerAuth auth;
  Limits limits;
  std::chrono::milliseconds stall_timeout{10000};  // a member mid-frame this long: dropped
  // A connection that has not proven itself (DESIGN §5): this long from its accept at most,
  // this many bytes in its frames, this many of them at once (the oldest goes for a new one).
  std::chrono::milliseconds handshake_timeout{5000};
  std::uint32_t max_unproven_frame = 4096;
  std::size_t max_unproven = 8192;
  std::size_t max_connections = 1 << 17;
  std::size_t max_pending_output = 16u << 20;  // a client that does not read its replies is dropped
  RefusalLog::Sink log;  // refusals, each address once (store/core/refusal_log.hpp)
};

}  // namespace aml::store
