// Node 0's launcher hosts the job's store (DESIGN §5). The server itself is single-threaded
// and event driven; it runs on a thread of its own so that the launcher can use it through
// an ordinary client, blocking calls included, like every other node.
#pragma once

#include <aml/error.hpp>
#include <memory>
#include <string>
#include <thread>

#include "store/store_server.hpp"

namespace aml {

class StoreHost {
 public:
  // Listens on every address at `port` for clients that present `token`.
  static Result<std::unique_ptr<StoreHost>> start(int port, const std::string& token);
  ~StoreHost();  // stops serving and joins the thread

  int port() const { return server_->port(); }

 private:
  explicit StoreHost(std::unique_ptr<store::StoreServer> server);

  std::unique_ptr<store::StoreServer> server_;
  std::thread thread_;
};

}  // namespace aml
