#include "store/core/first_bytes.hpp"

#include <array>

namespace aml::store {

FirstBytes door_for(std::string_view bytes) {
  // -1: any byte; else the byte the launchers' HELLO has there. Its length's second byte is
  // below 0x10 (an unproven frame is at most 4 KiB), its two high bytes are 0.
  constexpr std::array<int, kDoorBytes> kHello = {-1, -1, 0, 0, 1, 'A', 'M', 'L', 'S'};
  for (std::size_t i = 0; i < bytes.size() && i < kDoorBytes; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    const bool fits = i == 1 ? byte < 0x10 : kHello[i] < 0 || byte == kHello[i];
    if (!fits) return FirstBytes::torch;
  }
  return bytes.size() >= kDoorBytes ? FirstBytes::launchers : FirstBytes::undecided;
}

}  // namespace aml::store
