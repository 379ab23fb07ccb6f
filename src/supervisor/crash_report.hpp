#pragma once
// The launcher's own crash, told: a SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT in the launcher
// (its guardian or supervisor, never a worker: exec resets the handlers) writes what it was,
// where, and the launcher's stack to stderr, then dies of the same signal as it would have
// (its guardian then says so, as for any supervisor death). The stack's frames name the binary
// and an offset in it (`aml-launch(+0x5e2a1)`): `addr2line -f -C -e aml-launch 0x5e2a1` gives
// the function. The sanitizer builds keep their own, richer report.
#include <string>

namespace aml {

// `about`: the first line's words after "crashed" (the version and commit). Once, early.
void install_crash_report(const std::string& about);

}  // namespace aml
