#include <aml/error.hpp>

namespace aml {

std::string Error::message() const {
  if (!was_set) return variable + " is not set: " + expected;
  // A long value (a whole TF_CONFIG) is cut so that the line stays readable.
  constexpr std::size_t kShown = 160;
  std::string shown = value.size() > kShown ? value.substr(0, kShown) + "..." : value;
  return variable + "=" + shown + ": expected " + expected;
}

}  // namespace aml
