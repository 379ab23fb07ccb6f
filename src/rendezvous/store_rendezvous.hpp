// The rendezvous on node 0's store (DESIGN §5): node 0's launcher serves it, the others
// connect. Its liveness is the store's knowledge of its connections: a closed connection fires
// its last will at once, a silent one is named by silent().
#pragma once

#include <aml/store.hpp>

#include "rendezvous/rendezvous_client.hpp"

namespace aml {

class StoreRendezvous : public RendezvousClient {
 public:
  explicit StoreRendezvous(StoreClient client) : client_(std::move(client)) {}

  Result<bool> set(std::string_view key, std::string_view value) override {
    return client_.set(key, value);
  }
  Result<bool> set_many(const std::vector<std::pair<std::string, std::string>>& pairs) override {
    for (const auto& [key, value] : pairs) {
      if (auto set = client_.set(key, value); !set) return set;
    }
    return true;
  }
  Result<std::optional<std::string>> get(std::string_view key,
                                         std::chrono::milliseconds timeout) override {
    return client_.get(key, timeout);
  }
  Result<std::int64_t> add(std::string_view key, std::int64_t delta) override {
    return client_.add(key, delta);
  }
  Result<std::int64_t> wait_count(std::string_view count_key, std::int64_t above,
                                  std::string_view next_key,
                                  std::chrono::milliseconds timeout) override {
    (void)above;  // the next counter's key exists at once where the count is above it
    if (timeout.count() > 0) (void)client_.get(next_key, timeout);
    return client_.add(count_key, 0);
  }
  Result<bool> check(const std::vector<std::string>& keys) override { return client_.check(keys); }
  Result<bool> wait(const std::vector<std::string>& keys,
                    std::chrono::milliseconds timeout) override {
    return client_.wait(keys, timeout);
  }
  Result<std::vector<std::optional<std::string>>> get_all(
      const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    return client_.get_all(keys, timeout);
  }
  Result<bool> erase(std::string_view key) override { return client_.erase(key); }
  Result<std::string> compare_set(std::string_view key, std::string_view expected,
                                  std::string_view desired) override {
    return client_.compare_set(key, expected, desired);
  }
  Result<std::string> claim(std::string_view key, std::string_view value) override {
    return client_.compare_set(key, "", value);
  }
  Result<bool> set_last_will(std::string_view key, std::string_view value) override {
    return client_.set_last_will(key, value);
  }
  Result<bool> clear_last_will() override { return client_.clear_last_will(); }
  Result<bool> identify(std::string_view name) override { return client_.identify(name); }
  Result<std::vector<std::string>> silent(std::chrono::milliseconds at_least) override {
    return client_.silent(at_least);
  }
  // Nothing to send: the watch's asking again is a follower's sign of life (group_timing.hpp).
  Result<bool> heartbeat() override { return false; }
  Result<std::int64_t> clock_ns() override { return client_.clock_ns(); }
  Result<bool> start_get(std::string_view key, std::chrono::milliseconds timeout) override {
    return client_.start_get(key, timeout);
  }
  Result<std::optional<std::string>> finish_get() override { return client_.finish_get(); }
  int fd() const override { return client_.fd(); }
  void set_reply_timeout(std::chrono::milliseconds timeout) override {
    client_.set_reply_timeout(timeout);
  }
  std::string local_address() const override { return client_.local_address(); }

 private:
  StoreClient client_;
};

}  // namespace aml
