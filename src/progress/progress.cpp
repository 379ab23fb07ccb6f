// aml::progress() and aml_progress(): a worker says it is not hung (DESIGN §6). The first call
// maps the page its launcher shared (AML_LAUNCH_PROGRESS_FD); every call is then one atomic
// add in memory. Without an aml-launch, or with --hang-timeout off, a call does nothing.
#include <aml/rank.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <aml/rank.hpp>
#include <cstdlib>
#include <string>

#include "progress/progress_page.hpp"

namespace aml {
namespace {

ProgressPage* map_page() {
  const char* text = std::getenv(kProgressFdVariable);
  if (text == nullptr || *text == '\0') return nullptr;
  char* end = nullptr;
  long fd = std::strtol(text, &end, 10);
  if (*end != '\0' || fd < 0 || fd > 1 << 20) return nullptr;
  struct stat st {};
  // Only the launcher's page: the number may be stale in a process that closed it.
  if (fstat(static_cast<int>(fd), &st) != 0 || st.st_size != kProgressPageBytes) return nullptr;
  void* at = mmap(nullptr, kProgressPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                  static_cast<int>(fd), 0);
  if (at == MAP_FAILED) return nullptr;
  auto* page = static_cast<ProgressPage*>(at);
  if (page->magic.load(std::memory_order_relaxed) != kProgressMagic) {
    munmap(at, kProgressPageBytes);
    return nullptr;
  }
  return page;
}

}  // namespace

void progress(std::int64_t step) {
  static ProgressPage* const page = map_page();
  if (page == nullptr) return;
  page->calls.fetch_add(1, std::memory_order_relaxed);
  if (step >= 0) page->step.store(step, std::memory_order_relaxed);
}

}  // namespace aml

extern "C" void aml_progress(long long step) { aml::progress(step); }
