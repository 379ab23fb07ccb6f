// Errors as values: what was wrong with the environment or the flags, and a tiny result type.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace aml {

// The variable that was wrong, the value it had, and what was expected instead.
struct Error {
  std::string variable;
  std::string value;
  std::string expected;
  bool was_set = true;  // false: the variable was not set at all

  // One line for people: "RANK=8: expected a rank below WORLD_SIZE=8".
  std::string message() const;
};

inline Error invalid(std::string variable, std::string value, std::string expected) {
  return Error{std::move(variable), std::move(value), std::move(expected), true};
}
inline Error missing(std::string variable, std::string expected) {
  return Error{std::move(variable), {}, std::move(expected), false};
}

// A value or the Error that stopped it (std::expected is C++23).
template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace aml
