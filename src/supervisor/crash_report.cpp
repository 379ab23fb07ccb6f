#include "supervisor/crash_report.hpp"

#include <link.h>
#include <signal.h>
#include <unistd.h>
#include <unwind.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "supervisor/exit_status.hpp"

namespace aml {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kMostFrames = 64;

// Filled before any crash: the handler only reads them (no allocation, no lock in a crashed
// process). The stack is walked by the unwinder linked in (libgcc's, the one C++ exceptions
// use), not glibc's backtrace(), which loads libgcc_s at its first call: at every start, or in
// the crash itself.
char g_about[512];
char g_program[1024];                  // this executable's path, as addr2line takes it
std::uintptr_t g_base = 0;             // where it is loaded (a frame's offset is from here)
std::uintptr_t g_low = 0, g_high = 0;  // its loaded segments' extent
alignas(16) char g_alternate_stack[64 * 1024];  // a stack overflow's report needs a stack

void put(const char* text) { (void)!write(STDERR_FILENO, text, std::strlen(text)); }

void put_number(std::uintptr_t value, unsigned base) {
  char digits[32];
  int at = sizeof digits;
  digits[--at] = '\0';
  do {
    digits[--at] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0 && at > 0);
  put(digits + at);
}

struct Walk {
  std::uintptr_t frames[kMostFrames];
  int count = 0;
};

_Unwind_Reason_Code add_frame(_Unwind_Context* context, void* walk_arg) {
  auto* walk = static_cast<Walk*>(walk_arg);
  if (walk->count == kMostFrames) return _URC_END_OF_STACK;
  walk->frames[walk->count++] = static_cast<std::uintptr_t>(_Unwind_GetIP(context));
  return _URC_NO_REASON;
}

// One frame a line: this executable's as PATH(+0xOFFSET) [0xADDRESS], as glibc's backtrace
// writes them; another library's as its address alone.
void put_frame(std::uintptr_t ip) {
  put("  ");
  if (ip >= g_low && ip < g_high) {
    put(g_program);
    put("(+0x");
    put_number(ip - g_base, 16);
    put(") ");
  }
  put("[0x");
  put_number(ip, 16);
  put("]\n");
}

void report_crash(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  put("aml-launch: internal error: the launcher (pid ");
  put_number(static_cast<std::uintptr_t>(getpid()), 10);
  put(") crashed: ");
  put(classic_signal_name(signal_number));
  if (signal_number != SIGABRT && info != nullptr) {
    put(" at address 0x");
    put_number(reinterpret_cast<std::uintptr_t>(info->si_addr), 16);
  }
  put(" (");
  put(g_about);
  put("). Its stack follows; please report these lines (addr2line -f -C -e BINARY OFFSET "
      "names each frame):\n");
  Walk walk;
  _Unwind_Backtrace(add_frame, &walk);
  for (int i = 0; i < walk.count; ++i) {
    if (walk.frames[i] != 0) put_frame(walk.frames[i]);  // 0: the walk's end
  }
  put("aml-launch: end of the crashed launcher's stack\n");
  errno = saved_errno;
  // The handler was reset as it ran (SA_RESETHAND): the signal again, now by its default action
  // (a fault returns to the faulting instruction; a raised signal comes back as the handler
  // returns, its block lifted).
  raise(signal_number);
}

// The main program's load address and the extent of its loaded segments.
int find_program(dl_phdr_info* info, std::size_t, void*) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return 0;  // a library
  g_base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (g_low == 0 || start < g_low) g_low = start;
    if (start + segment.p_memsz > g_high) g_high = start + segment.p_memsz;
  }
  return 1;
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
  const ssize_t length = readlink("/proc/self/exe", g_program, sizeof g_program - 1);
  if (length <= 0) std::strcpy(g_program, "aml-launch");
  dl_iterate_phdr(find_program, nullptr);
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
