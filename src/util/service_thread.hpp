// A thread that serves a loop beside the launcher's main thread (the store server, the workers'
// store relay, etcd's lease keeper): it takes no signal (they are the main thread's, by its
// signalfd) and runs ahead of this node's own busy workers where the launcher may raise its
// priority.
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
