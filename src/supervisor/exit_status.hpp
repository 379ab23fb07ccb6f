// Exit statuses the way shells report them: the exit code, or 128 + N for signal N.
#pragma once

#include <string>
#include <string_view>

namespace aml {

int exit_code_of(int wait_status);
// "exit code 7" or "signal 9 (SIGKILL)".
std::string describe_wait_status(int wait_status);
// "SIGKILL", "SIGRTMIN+3"; "SIG?" for what is no signal. Our own table: glibc's sigabbrev_np
// is newer (2.32) than the glibc the portable binary may need (2.17).
std::string signal_name(int signal);
// The same name for signals 1-31 without allocating (a signal handler's), else nullptr.
const char* classic_signal_name(int signal);
// The number of "USR1", "SIGUSR1" or "10"; 0 for what names no signal.
int signal_number(std::string_view name);

}  // namespace aml
