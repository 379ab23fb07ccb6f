#include "store/launchers/handshake.hpp"

#include <sodium.h>

#include <mutex>

namespace aml::store {
namespace {

void sodium_once() {
  static std::once_flag once;
  // It fails only where there is no random source at all; randombytes_buf then stops the
  // process rather than hand out a predictable nonce.
  std::call_once(once, [] { [[maybe_unused]] const int ready = sodium_init(); });
}

void append_field(std::string& into, std::string_view field) {
  const auto n = static_cast<std::uint32_t>(field.size());
  for (int i = 0; i < 4; ++i) into.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  into.append(field);
}

}  // namespace

const char* auth_kind_name(AuthKind kind) {
  switch (kind) {
    case AuthKind::key:
      return "key";
    case AuthKind::munge:
      return "munge";
    case AuthKind::none:
      break;
  }
  return "none";
}

bool is_client_role(std::uint8_t role) {
  return role == static_cast<std::uint8_t>(Role::launcher) ||
         role == static_cast<std::uint8_t>(Role::worker);
}

std::string random_nonce() {
  sodium_once();
  std::string nonce(kNonceBytes, '\0');
  randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

std::string role_key(std::string_view secret, std::string_view job, Role role) {
  std::string label = "aml-launch role key v1";
  label.push_back(static_cast<char>(role));
  append_field(label, job);
  return mac(secret, label);
}

std::string proof_message(Role prover, Role client, std::string_view job, std::string_view member,
                          std::string_view client_nonce, std::string_view server_nonce) {
  std::string message = "aml-launch store proof v2";
  message.push_back(static_cast<char>(prover));
  message.push_back(static_cast<char>(client));
  append_field(message, job);
  append_field(message, member);
  append_field(message, client_nonce);
  append_field(message, server_nonce);
  return message;
}

std::string mac(std::string_view key, std::string_view message) {
  sodium_once();
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()),
                                message.size());
  std::string out(kMacBytes, '\0');
  crypto_auth_hmacsha256_final(&state, reinterpret_cast<unsigned char*>(out.data()));
  sodium_memzero(&state, sizeof(state));
  return out;
}

bool same_mac(std::string_view a, std::string_view b) {
  return a.size() == b.size() && !a.empty() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool hello_unanswered(const std::string& expected) {
  return expected.find(kHelloUnanswered) != std::string::npos;
}

}  // namespace aml::store
