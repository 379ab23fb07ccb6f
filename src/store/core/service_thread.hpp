// A thread that serves the job's stores (the store server, the workers' store relay) beside the
// launcher's main thread: it takes no signal (they are the main thread's, by its signalfd) and
// runs ahead of this node's own busy workers where the launcher may raise its priority.
#pragma once

#include <functional>
#include <thread>

namespace aml {

class ServiceThread {
 public:
  // Runs `serve` until `stop` (called from the destructor) makes it return.
  ServiceThread(std::function<void()> serve, std::function<void()> stop);
  ~ServiceThread();
  ServiceThread(const ServiceThread&) = delete;
  ServiceThread& operator=(const ServiceThread&) = delete;

 private:
  std::function<void()> stop_;
  std::thread thread_;
};

}  // namespace aml
