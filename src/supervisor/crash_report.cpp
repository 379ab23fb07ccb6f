#include "supervisor/crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aml {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kMostFrames = 64;

// Filled before any crash: the handler only reads them (no allocation in a crashed process).
char g_about[512];
alignas(16) char g_alternate_stack[64 * 1024];  // a stack overflow's report needs a stack

void put(const char* text) { (void)!write(STDERR_FILENO, text, std::strlen(text)); }

void put_number(unsigned long value, int base) {
  char digits[32];
  int at = sizeof digits;
  digits[--at] = '\0';
  do {
    digits[--at] = "0123456789abcdef"[value % static_cast<unsigned long>(base)];
    value /= static_cast<unsigned long>(base);
  } while (value != 0 && at > 0);
  put(digits + at);
}

const char* crash_name(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    default:
      return "SIGABRT";
  }
}

void report_crash(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  put("aml-launch: internal error: the launcher (pid ");
  put_number(static_cast<unsigned long>(getpid()), 10);
  put(") crashed: ");
  put(crash_name(signal_number));
  if (signal_number != SIGABRT && info != nullptr) {
    put(" at address 0x");
    put_number(reinterpret_cast<unsigned long>(info->si_addr), 16);
  }
  put(" (");
  put(g_about);
  put("). Its stack follows; please report these lines (addr2line -f -C -e BINARY OFFSET "
      "names each frame):\n");
  void* frames[kMostFrames];
  const int count = backtrace(frames, kMostFrames);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  put("aml-launch: end of the crashed launcher's stack\n");
  errno = saved_errno;
  // The handler was reset as it ran (SA_RESETHAND): the signal again, now by its default action
  // (a fault returns to the faulting instruction; a raised signal comes back as the handler
  // returns, its block lifted).
  raise(signal_number);
}

}  // namespace

void install_crash_report(const std::string& about) {
#if defined(__SANITIZE_ADDRESS__)
  return;  // ASan's own report names the bad access too
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return;
#endif
#endif
  std::strncpy(g_about, about.c_str(), sizeof g_about - 1);
  // The first backtrace loads the unwinder (it may allocate): here, not in a crash.
  void* warm[2];
  (void)backtrace(warm, 2);
  stack_t alternate{};
  alternate.ss_sp = g_alternate_stack;
  alternate.ss_size = sizeof g_alternate_stack;
  (void)sigaltstack(&alternate, nullptr);
  struct sigaction action {};
  action.sa_sigaction = report_crash;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal_number : kCrashSignals) (void)sigaction(signal_number, &action, nullptr);
}

}  // namespace aml
