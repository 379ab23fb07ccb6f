// The names of pickle's opcodes that a flight recorder dump never holds (classes, calls, the
// text protocol's forms), for the reader's errors: "0x63 (GLOBAL)".
#pragma once

#include <string>

namespace aml {

std::string opcode_text(unsigned char op);

}  // namespace aml
