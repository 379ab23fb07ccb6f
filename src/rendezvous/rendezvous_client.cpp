#include "rendezvous/rendezvous_client.hpp"

namespace aml {

// Node 0's store answers each call in microseconds: one after another is what it costs there.
Result<std::vector<std::optional<std::string>>> RendezvousClient::batch(
    const std::vector<BatchOp>& ops) {
  std::vector<std::optional<std::string>> results(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const BatchOp& op = ops[i];
    switch (op.kind) {
      case BatchOp::Kind::set:
        if (auto done = set(op.key, op.value); !done) return done.error();
        break;
      case BatchOp::Kind::get: {
        auto value = get(op.key, std::chrono::milliseconds(0));
        if (!value) return value.error();
        results[i] = std::move(*value);
        break;
      }
      case BatchOp::Kind::add: {
        auto count = add(op.key, 1);
        if (!count) return count.error();
        results[i] = std::to_string(*count);
        if (!op.value.empty()) {
          if (auto kept = set(arrival_key(op.key, *count - 1), op.value); !kept) {
            return kept.error();
          }
        }
        break;
      }
      case BatchOp::Kind::last_will:
      case BatchOp::Kind::lasting_will:
        if (auto done = set_last_will(op.key, op.value); !done) return done.error();
        break;
      case BatchOp::Kind::create: {
        auto stored = compare_set(op.key, "", op.value);
        if (!stored) return stored.error();
        results[i] = std::move(*stored);
        break;
      }
      case BatchOp::Kind::claim: {
        auto stored = claim(op.key, op.value);
        if (!stored) return stored.error();
        results[i] = std::move(*stored);
        break;
      }
    }
  }
  return results;
}

Result<std::vector<std::optional<std::string>>> RendezvousClient::arrivals(
    std::string_view count_key, std::int64_t from, std::int64_t to,
    std::chrono::milliseconds timeout) {
  std::vector<std::string> keys;
  for (std::int64_t index = from; index < to; ++index)
    keys.push_back(arrival_key(count_key, index));
  if (keys.empty()) return std::vector<std::optional<std::string>>();
  return get_all(keys, timeout);
}

}  // namespace aml
