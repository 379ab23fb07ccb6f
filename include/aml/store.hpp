// Client of the aml-launch rendezvous store (DESIGN §5): what launchers, the communicator
// bootstrap and user code use to meet, exchange small values and wait for each other.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

// How a client proves that it belongs to the job, and checks that the store does (DESIGN §5):
// nothing (a job without a secret), a key derived from the job's secret, or a munge credential
// (Slurm). The job's secret itself is never sent.
struct StoreCredentials {
  enum class Kind : std::uint8_t { none = 0, key = 1, munge = 2 };
  Kind kind = Kind::none;
  std::string key;        // Kind::key: this role's key (32 bytes)
  bool launcher = false;  // a launcher of the job (a member of its node group), else a worker
  std::string member;     // who connects, for the store's log: "node 2", "rank 5"
  // A worker's, from what aml-launch gave it (AML_LAUNCH_STORE_AUTH, AML_LAUNCH_STORE_KEY):
  // none where those are absent.
  static Result<StoreCredentials> from_environment();
};

class StoreClient {
 public:
  static constexpr std::chrono::milliseconds kForever{0xffffffffu};

  // Connects, presents the job's token (its public run id) and, unless the credentials are
  // none, proves itself and checks the store's proof; an error says which store refused and why.
  static Result<StoreClient> connect(const std::string& host, int port, const std::string& token,
                                     const StoreCredentials& credentials,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The same with no credentials (a store without a secret).
  static Result<StoreClient> connect(const std::string& host, int port, const std::string& token,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(30));

  StoreClient(StoreClient&& other) noexcept;
  StoreClient& operator=(StoreClient&& other) noexcept;
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;
  ~StoreClient();

  Result<bool> set(std::string_view key, std::string_view value);
  // The value once the key exists; nullopt when the timeout passed first.
  Result<std::optional<std::string>> get(std::string_view key, std::chrono::milliseconds timeout);
  // Adds delta to the key's number (0 when absent) and gives the new value.
  Result<std::int64_t> add(std::string_view key, std::int64_t delta);
  Result<bool> check(const std::vector<std::string>& keys);
  // True once every key exists; false when the timeout passed first.
  Result<bool> wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Waits until every key exists or the timeout passes (one round trip for them all), then
  // gives each key's value, nullopt for one still absent. At most 1,024 keys a call.
  Result<std::vector<std::optional<std::string>>> get_all(const std::vector<std::string>& keys,
                                                          std::chrono::milliseconds timeout);
  Result<bool> erase(std::string_view key);  // whether the key existed
  // Stores `desired` when the value is `expected` ("" for an absent key); gives the value
  // stored afterwards.
  Result<std::string> compare_set(std::string_view key, std::string_view expected,
                                  std::string_view desired);
  // When this connection closes without clear_last_will() (the process died, its host went
  // away), the store sets key to value if it is absent: the others hear of it at once.
  Result<bool> set_last_will(std::string_view key, std::string_view value);
  Result<bool> clear_last_will();
  // The store watches this connection's silence under `name`: silent() names it once it has
  // sent nothing for a while. Liveness without the store's host asking each client.
  Result<bool> identify(std::string_view name);
  // The names of identified connections that sent nothing for at least `at_least`: not waiting
  // for an answer, and silent since their last request or their last wait's answer, whichever
  // came later (counted from the server's own resumption where it was itself paused); at most
  // 1,024.
  Result<std::vector<std::string>> silent(std::chrono::milliseconds at_least);
  // Says "alive" without waiting for an answer (there is none): an error only where the
  // connection is gone (see set_reply_timeout).
  Result<bool> heartbeat();
  // The store's host's clock (CLOCK_REALTIME, nanoseconds since the epoch).
  Result<std::int64_t> clock_ns();

  // For event loops: start_get sends a get and returns at once; when fd() turns readable,
  // finish_get reads its answer. No other request may be sent in between.
  Result<bool> start_get(std::string_view key, std::chrono::milliseconds timeout);
  Result<std::optional<std::string>> finish_get();
  int fd() const { return fd_; }

  // A reply that does not come within this time (beyond what a get or wait may wait by
  // itself) is an error: the store's host is gone or cut off. So is a request its host does
  // not acknowledge within it (TCP_USER_TIMEOUT: a paused or cut-off host), found by the next
  // call. 0, the default: wait for ever. A reply that did not come in time (or came cut)
  // closes the connection: every later call fails, and fd() is -1. Connect again.
  void set_reply_timeout(std::chrono::milliseconds timeout);
  // This end's address ("10.0.0.2"): the address the store's host sees this node by.
  std::string local_address() const;

 private:
  StoreClient(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  // The handshake of store/launchers/handshake.hpp, from the client's side.
  Result<bool> handshake(const std::string& token, const StoreCredentials& credentials);
  // Sends one request frame and reads one reply body (its status byte first).
  Result<std::string> call(const std::string& frame,
                           std::chrono::milliseconds server_wait = std::chrono::milliseconds(0));
  Result<bool> send_request(const std::string& frame);
  Result<std::string> read_reply(std::chrono::milliseconds server_wait);
  Result<std::optional<std::string>> get_result(const Result<std::string>& reply);

  int fd_ = -1;
  std::string where_;  // "host:port", for errors
  std::chrono::milliseconds reply_timeout_{0};
};

}  // namespace aml
