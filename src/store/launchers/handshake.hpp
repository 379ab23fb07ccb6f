// The store's mutual proof (DESIGN §5). A client says HELLO with its nonce; the store answers
// with its own nonce and a proof over both, and the client checks that proof before it gives
// its own. Each proof is HMAC-SHA256 (libsodium) over who proves, the client's role, the job,
// the member and both nonces: a recorded handshake does not verify against a fresh nonce
// (no replay), and the store's proof is never a client's (no reflection). The job's secret
// itself never crosses the wire; each role has a key of its own derived from it, so the key a
// worker is given cannot prove a launcher.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aml::store {

inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kMacBytes = 32;

// How a connection proves it belongs to the job (HELLO's auth byte).
enum class AuthKind : std::uint8_t { none = 0, key = 1, munge = 2 };
// Who speaks (HELLO's role byte, and the first byte of what a proof covers).
enum class Role : std::uint8_t { launcher = 'L', worker = 'W', store = 'S' };

const char* auth_kind_name(AuthKind kind);  // "none", "key", "munge"
bool is_client_role(std::uint8_t role);

// 32 bytes from the kernel's random source (through libsodium).
std::string random_nonce();
// The key of one role in one job, from the job's secret (any length).
std::string role_key(std::string_view secret, std::string_view job, Role role);
// What a proof covers: every field length-prefixed, so that no two tuples read alike.
std::string proof_message(Role prover, Role client, std::string_view job, std::string_view member,
                          std::string_view client_nonce, std::string_view server_nonce);
std::string mac(std::string_view key, std::string_view message);  // HMAC-SHA256, 32 bytes
// Constant time for equal lengths (a MAC's length is no secret).
bool same_mac(std::string_view a, std::string_view b);

// What a HELLO that got no answer at all says (the connection closed, or silence): a store too
// busy to read it in time or out of descriptors, or not a store. A launcher dialing its
// rendezvous tries again; an answer that is not a store's stands.
inline constexpr std::string_view kHelloUnanswered = "(HELLO unanswered: ";
// The store client's words, in parentheses, for a reply that never came (store_client.cpp):
// what the HELLO tells apart from an answer that is not a store's.
inline constexpr std::string_view kNoAnswer = "no answer";
inline constexpr std::string_view kConnectionClosed = "the connection closed";
bool hello_unanswered(const std::string& expected);

}  // namespace aml::store
