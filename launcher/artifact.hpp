// What this aml-launch binary is and can do: its version, its target, and the preflight that
// came with it (aml-preflight beside it, built from the same tree).
#pragma once

#include <string>

namespace aml {

// aml-preflight beside this executable. A release binary renamed by architecture
// (aml-launch-aarch64) looks for aml-preflight-aarch64 first, then aml-preflight.
std::string preflight_program();

// The --version text: version and commit, the target (architecture, glibc floor of a
// portable build), the communicator backends and how each is had, and whether the preflight
// is there.
std::string version_text();
// Its first line alone: "aml-launch VERSION (commit COMMIT)".
std::string version_line();

}  // namespace aml
