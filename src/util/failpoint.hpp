// Failpoints, as etcd's robustness tests have them: a named point in the launcher where a test
// kills it, as a fault would, at a moment no signal from outside can hit (between two writes of
// one step). AML_LAUNCH_TEST_FAILPOINT=NAME:FILE kills the launcher (SIGKILL) that reaches NAME
// first: the one that creates FILE; NAME:FILE:stop pauses it there (SIGSTOP) instead, for the
// test to do what it will (etcd lost) before it goes on; NAME:FILE:segv makes it crash there (a
// bad memory access: its crash report, supervisor/crash_report.hpp). Unset, as in every real
// job, it costs one getenv.
#pragma once

#include <string_view>

namespace aml {

void failpoint(std::string_view name);

}  // namespace aml
