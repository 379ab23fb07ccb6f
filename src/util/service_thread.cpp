#include "util/service_thread.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/signal_free_thread.hpp"

namespace aml {
namespace {

constexpr int kServicePriority = -10;  // nice value: well ahead of nice-0 workers, below -20

}  // namespace

ServiceThread::ServiceThread(std::function<void()> serve, std::function<void()> stop)
    : stop_(std::move(stop)) {
  // Signals are the main thread's business (its signalfd): none may land here.
  thread_ = signal_free_thread([serve = std::move(serve)] {
    // Every node's rendezvous, liveness and its workers' store calls go through this thread:
    // it must not wait behind this node's own busy workers (data loaders at full CPU). Allowed
    // only to root (and CAP_SYS_NICE): elsewhere it keeps the launcher's priority. The
    // workers, started by the main thread, keep theirs.
    // (The thread's id by system call: glibc has gettid() only since 2.30, releases need 2.17.)
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kServicePriority);
    serve();
  });
}

ServiceThread::~ServiceThread() {
  stop_();
  thread_.join();
}

}  // namespace aml
