// The launchers' door's admission (DESIGN §5): the handshake that makes a connection a member of
// the job (HELLO, the store's challenge and proof, the client's PROVE), what a proven worker
// may not do, and the refusal of everything else. A connection that has not proven itself is
// nothing: it holds no keys, no last will, no silence watch.
#include <unistd.h>

#include "store/launchers/launchers_door.hpp"
#include "store/launchers/munge_credential.hpp"

namespace aml::store {
namespace {

// The launchers' own keys (the node group's rounds, verdicts, hang inquiry): not a worker's.
constexpr std::string_view kLauncherKeys = "aml/";

std::string status_ok() { return FrameWriter().u8(static_cast<std::uint8_t>(Status::ok)).finish(); }

}  // namespace

void LaunchersDoor::refuse(Connection& c, const std::string& why) {
  const std::uint64_t id = c.id;
  core_.refused(c.peer, why);
  unproven_.erase(id);
  // One whose door is not chosen may be a torch client: it gets no launchers' frame.
  if (!state(c).undecided) reply_error(c, why, true);
  core_.close(id);  // where the reason could not be sent at once, it is not waited for
}

void LaunchersDoor::evict_oldest_unproven(const std::string& why) {
  if (unproven_.empty()) return;
  refuse(*core_.find(*unproven_.begin()), why);
}

void LaunchersDoor::admit(Connection& c, const Request& r) {
  if (r.op == Opcode::hello && !state(c).proving) return hello(c, r);
  if (r.op == Opcode::prove && state(c).proving) return prove(c, r);
  refuse(c, "not an aml store client (a request before the handshake)");
}

void LaunchersDoor::hello(Connection& c, const Request& r) {
  if (r.magic != kMagic) return refuse(c, "not an aml store client");
  if (r.version != kVersion) {
    return refuse(c, "protocol version " + std::to_string(r.version) + ", this store speaks " +
                         std::to_string(kVersion) + " (every node needs the same aml-launch)");
  }
  if (!same_token(r.token, options_.token)) return refuse(c, "another job's run id");
  if (!is_client_role(r.role)) return refuse(c, "not a client's role");
  const auto theirs = static_cast<AuthKind>(r.auth);
  const AuthKind mine = options_.auth.kind;
  if (theirs != mine) {
    if (mine == AuthKind::none) {
      return refuse(c, std::string("this job's store has no job secret and the client has one (") +
                           auth_kind_name(theirs) + "): give every node the same secret");
    }
    return refuse(c, std::string("this job admits only its own members (") + auth_kind_name(mine) +
                         "), the client offered " + auth_kind_name(theirs) +
                         ": a stranger, or a node without the job's secret");
  }
  state(c).role = static_cast<Role>(r.role);
  state(c).member = r.member;
  if (mine == AuthKind::none) return proven(c);
  if (r.nonce.size() != kNonceBytes) return refuse(c, "a handshake without a proper nonce");
  state(c).client_nonce = r.nonce;
  state(c).server_nonce = random_nonce();
  auto proof = server_proof(c);
  if (!proof) return;  // refused
  state(c).proving = true;
  core_.reply(c, FrameWriter()
                     .u8(static_cast<std::uint8_t>(Status::ok))
                     .u8(static_cast<std::uint8_t>(mine))
                     .str(state(c).server_nonce)
                     .str(*proof)
                     .finish());
}

std::optional<std::string> LaunchersDoor::server_proof(Connection& c) {
  const LaunchersConnection& s = state(c);
  const std::string message =
      proof_message(Role::store, s.role, options_.token, s.member, s.client_nonce, s.server_nonce);
  if (options_.auth.kind == AuthKind::key) {
    return mac(s.role == Role::launcher ? options_.auth.launcher_key : options_.auth.worker_key,
               message);
  }
  auto sealed = munge_seal(message);
  if (!sealed) {
    refuse(c, "this store cannot make munge credentials: " + sealed.error().value);
    return std::nullopt;
  }
  return *sealed;
}

void LaunchersDoor::prove(Connection& c, const Request& r) {
  const LaunchersConnection& s = state(c);
  const std::string expected =
      proof_message(s.role, s.role, options_.token, s.member, s.client_nonce, s.server_nonce);
  if (options_.auth.kind == AuthKind::key) {
    const std::string& key =
        s.role == Role::launcher ? options_.auth.launcher_key : options_.auth.worker_key;
    if (!same_mac(r.nonce, mac(key, expected))) {
      return refuse(c, "a wrong proof (another secret, or a replayed or reflected handshake)");
    }
    return proven(c);
  }
  auto unsealed = munge_unseal(r.nonce);
  if (!unsealed) return refuse(c, unsealed.error().variable + ": " + unsealed.error().value);
  if (unsealed->uid != geteuid()) {
    return refuse(c, "a munge credential of UID " + std::to_string(unsealed->uid) +
                         ", not of the job's user (UID " + std::to_string(geteuid()) + ")");
  }
  if (!same_mac(unsealed->payload, expected)) {
    return refuse(c, "a munge credential that does not name this job and handshake");
  }
  proven(c);
}

void LaunchersDoor::proven(Connection& c) {
  state(c).proving = false;
  c.member = true;
  state(c).decoder.set_max_frame(options_.limits.max_frame);
  unproven_.erase(c.id);
  if (options_.vouched && state(c).role == Role::launcher) options_.vouched->add(c.peer);
  core_.reply(c, status_ok());
}

bool LaunchersDoor::worker_may(const Connection& c, const Request& r, std::string& why) const {
  if (state(c).role != Role::worker) return true;
  if (r.op == Opcode::identify || r.op == Opcode::silent) {
    why = "a worker is not a member of the node group (identify, silent)";
    return false;
  }
  for (const std::string& k : r.keys) {
    if (std::string_view(k).starts_with(kLauncherKeys)) {
      why = "a worker may not use the launchers' keys (" + std::string(kLauncherKeys) + "...)";
      return false;
    }
  }
  return true;
}

}  // namespace aml::store
