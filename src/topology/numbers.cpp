#include "topology/numbers.hpp"

#include <string>

namespace aml {

Result<int> parse_number(std::string_view variable, std::string_view text, int min, int max) {
  auto expectation = [&] {
    return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  };
  if (text.empty() || text.size() > 10) {
    return invalid(std::string(variable), std::string(text), expectation());
  }
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return invalid(std::string(variable), std::string(text), expectation());
    value = value * 10 + (c - '0');
  }
  if (value < min || value > max) {
    return invalid(std::string(variable), std::string(text), expectation());
  }
  return static_cast<int>(value);
}

Result<int> parse_port(std::string_view variable, std::string_view text) {
  auto port = parse_number(variable, text, 1, 65535);
  if (!port) return invalid(std::string(variable), std::string(text), "a TCP port from 1 to 65535");
  return port;
}

Result<int> require_number(const Env& env, std::string_view variable, int min, int max) {
  const std::string* text = find(env, variable);
  if (text == nullptr) {
    return missing(std::string(variable),
                   "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return parse_number(variable, *text, min, max);
}

Result<std::optional<int>> optional_number(const Env& env, std::string_view variable, int min,
                                           int max) {
  const std::string* text = find(env, variable);
  if (text == nullptr) return std::optional<int>();
  auto value = parse_number(variable, *text, min, max);
  if (!value) return value.error();
  return std::optional<int>(*value);
}

Result<std::optional<int>> optional_port(const Env& env, std::string_view variable) {
  const std::string* text = find(env, variable);
  if (text == nullptr) return std::optional<int>();
  auto value = parse_port(variable, *text);
  if (!value) return value.error();
  return std::optional<int>(*value);
}

Result<NodeRange> parse_node_range(std::string_view variable, std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    auto n = parse_number(variable, text, 1, kMaxCount);
    if (!n) return n.error();
    return NodeRange{*n, *n};
  }
  auto low = parse_number(variable, text.substr(0, colon), 1, kMaxCount);
  auto high = parse_number(variable, text.substr(colon + 1), 1, kMaxCount);
  if (!low || !high || *low > *high) {
    return invalid(std::string(variable), std::string(text),
                   "a node count N or an elastic range MIN:MAX with 1 <= MIN <= MAX");
  }
  return NodeRange{*low, *high};
}

}  // namespace aml
