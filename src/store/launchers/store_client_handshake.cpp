// The client's side of the store's handshake (store/launchers/handshake.hpp): say who it is, check
// the store's proof before giving its own (a fake store at the endpoint learns nothing and feeds it
// nothing), then prove itself. And a worker's credentials, from its environment.
#include <unistd.h>

#include <aml/store.hpp>
#include <cstdlib>

#include "store/launchers/handshake.hpp"
#include "store/launchers/munge_credential.hpp"
#include "store/launchers/wire.hpp"
#include "topology/worker_marker.hpp"
#include "util/hex.hpp"

namespace aml {

using store::AuthKind;
using store::FieldReader;
using store::FrameWriter;
using store::Opcode;
using store::Role;

namespace {

// What answers at the endpoint must answer a HELLO within this: a port that is not a store
// (etcd, a web server, another program) is named within seconds, not waited on for ever.
constexpr std::chrono::milliseconds kHandshakeReply{10000};

std::string env_or_empty(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr ? value : "";
}

}  // namespace

Result<StoreCredentials> StoreCredentials::from_environment() {
  StoreCredentials credentials;
  credentials.member = "rank " + (env_or_empty("RANK").empty() ? "?" : env_or_empty("RANK"));
  const std::string kind = env_or_empty(kStoreAuthVariable);
  if (kind.empty() || kind == "none") return credentials;
  if (kind == "munge") {
    credentials.kind = Kind::munge;
    return credentials;
  }
  if (kind != "key") {
    return invalid(std::string(kStoreAuthVariable), kind, "none, key or munge");
  }
  credentials.kind = Kind::key;
  credentials.key = from_hex(env_or_empty(kStoreKeyVariable));
  if (credentials.key.size() != store::kMacBytes) {
    return invalid(std::string(kStoreKeyVariable), "(not shown)",
                   "the 64 hex digits of the store key aml-launch gives its workers");
  }
  return credentials;
}

Result<bool> StoreClient::handshake(const std::string& token, const StoreCredentials& given) {
  // A member name is for the store's log: one past the wire's limit (a long host name) is cut,
  // not refused. Both sides prove over what was sent.
  StoreCredentials credentials = given;
  if (credentials.member.size() > store::Limits{}.max_member) {
    credentials.member.resize(store::Limits{}.max_member);
  }
  const auto kind = static_cast<AuthKind>(credentials.kind);
  const Role role = credentials.launcher ? Role::launcher : Role::worker;
  const std::string nonce = kind == AuthKind::none ? std::string() : store::random_nonce();
  const auto kept_timeout = reply_timeout_;
  set_reply_timeout(kHandshakeReply);
  auto reply = call(FrameWriter()
                        .u8(static_cast<std::uint8_t>(Opcode::hello))
                        .u32(store::kMagic)
                        .u16(store::kVersion)
                        .str(token)
                        .u8(static_cast<std::uint8_t>(kind))
                        .u8(static_cast<std::uint8_t>(role))
                        .str(credentials.member)
                        .str(nonce)
                        .finish());
  set_reply_timeout(kept_timeout);
  if (!reply) {
    // A store that refused says why; anything else that listens there (etcd, a web server,
    // another program) does not answer a HELLO as a store does.
    const std::string& got = reply.error().expected;
    if (got.find("it said:") != std::string::npos) return reply.error();
    // Nothing came back at all: a store too busy or out of descriptors, or something else.
    const auto said = [&got](std::string_view words) {
      // Appended, not "(" + ... + ")": gcc 12's -O3 warns falsely (-Wrestrict) on that form.
      std::string needle;
      needle.reserve(words.size() + 2);
      needle.append("(").append(words).append(")");
      return got.find(needle) != std::string::npos;
    };
    const std::string_view silence = said(store::kConnectionClosed) ? store::kConnectionClosed
                                     : said(store::kNoAnswer)       ? store::kNoAnswer
                                                                    : std::string_view();
    if (silence.empty()) {
      return invalid("store", where_,
                     "an aml-launch store answering its HELLO (" + got +
                         "): something else listens there; is MASTER_PORT (the rendezvous "
                         "endpoint's port) the store's?");
    }
    // The last words in parentheses are the reason a waiting launcher's lines quote.
    return invalid("store", where_,
                   "an aml-launch store answering its HELLO: node 0's store may be too busy or "
                   "out of descriptors (its own log says which), or something else listens "
                   "there; is MASTER_PORT the rendezvous endpoint's port? " +
                       std::string(store::kHelloUnanswered) + std::string(silence) + ")");
  }
  if (kind == AuthKind::none) return true;

  // The store proves itself first, over both nonces.
  FieldReader in(std::string_view(*reply).substr(1));
  auto their_kind = in.u8();
  auto server_nonce = in.str(store::kNonceBytes);
  auto proof = in.str(4096);
  auto not_the_store = [&](const std::string& why) {
    return invalid("store", where_,
                   "the job's own store (" + why +
                       "): not this job's store, or one without the same job secret");
  };
  if (!their_kind || *their_kind != static_cast<std::uint8_t>(kind) || !server_nonce ||
      server_nonce->size() != store::kNonceBytes || !proof) {
    return not_the_store("it did not answer the challenge");
  }
  const std::string theirs =
      store::proof_message(Role::store, role, token, credentials.member, nonce, *server_nonce);
  const std::string mine =
      store::proof_message(role, role, token, credentials.member, nonce, *server_nonce);
  std::string my_proof;
  if (kind == AuthKind::key) {
    if (!store::same_mac(*proof, store::mac(credentials.key, theirs))) {
      return not_the_store("its proof is wrong");
    }
    my_proof = store::mac(credentials.key, mine);
  } else {
    auto unsealed = store::munge_unseal(std::string(*proof));
    if (!unsealed) return not_the_store("its munge credential: " + unsealed.error().value);
    if (unsealed->uid != geteuid()) {
      return not_the_store("its munge credential is UID " + std::to_string(unsealed->uid) +
                           "'s, not this user's");
    }
    if (!store::same_mac(unsealed->payload, theirs)) {
      return not_the_store("its munge credential names another job or handshake");
    }
    auto sealed = store::munge_seal(mine);
    if (!sealed) return sealed.error();
    my_proof = std::move(*sealed);
  }
  set_reply_timeout(kHandshakeReply);
  auto accepted =
      call(FrameWriter().u8(static_cast<std::uint8_t>(Opcode::prove)).str(my_proof).finish());
  set_reply_timeout(kept_timeout);
  if (!accepted) return accepted.error();
  return true;
}

}  // namespace aml
