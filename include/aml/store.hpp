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

class StoreClient {
 public:
  static constexpr std::chrono::milliseconds kForever{0xffffffffu};

  // Connects and presents the job's token; an error says which store refused and why.
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
  Result<bool> erase(std::string_view key);  // whether the key existed
  // Stores `desired` when the value is `expected` ("" for an absent key); gives the value
  // stored afterwards.
  Result<std::string> compare_set(std::string_view key, std::string_view expected,
                                  std::string_view desired);

 private:
  StoreClient(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  // Sends one request frame and reads one reply body (its status byte first).
  Result<std::string> call(const std::string& frame);

  int fd_ = -1;
  std::string where_;  // "host:port", for errors
};

}  // namespace aml
