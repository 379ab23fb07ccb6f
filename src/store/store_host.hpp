// A store served from a thread of its own: node 0's launcher hosts the job's store so (DESIGN
// §5), and rank 0 of a communicator when no launcher store is there. The server itself is
// single-threaded and event driven; its own thread lets its host use it through an ordinary
// client, blocking calls included, like everybody else.
#pragma once

#include <aml/error.hpp>
#include <memory>
#include <string>
#include <thread>

#include "store/store_server.hpp"

namespace aml {

class StoreHost {
 public:
  // Listens on every address at `port` for clients that present `token`; `role` says in an
  // error why that port must be free.
  static Result<std::unique_ptr<StoreHost>> start(int port, const std::string& token,
                                                  const std::string& role);
  ~StoreHost();  // stops serving and joins the thread

  int port() const { return server_->port(); }

 private:
  explicit StoreHost(std::unique_ptr<store::StoreServer> server);

  std::unique_ptr<store::StoreServer> server_;
  std::thread thread_;
};

}  // namespace aml
