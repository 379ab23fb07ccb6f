// torch's door on a socket the launchers' store listens on (DESIGN §3: one MASTER_PORT). The
// launchers' store (its own thread) accepts every connection and reads its first bytes
// (first_bytes.hpp); one that speaks torch is handed through this doorway to the round's
// workers' store (another thread), which serves it from then on. Each round's store opens the
// doorway and closes it before it goes, with its keys and connections: no connection reaches a
// store that is gone, and none of a later round reaches an earlier one's keys.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/torch/admitted_hosts.hpp"
#include "util/unique_fd.hpp"

namespace aml::store {

class StoreServer;

class TorchDoorway {
 public:
  // From now on torch's connections go to `server` (it stays until close()), from the
  // `admitted` hosts alone.
  void open(StoreServer* server, std::shared_ptr<const AdmittedHosts> admitted);
  void close();  // returns once no handing is under way

  enum class Handed { taken, stranger, closed };
  // A connection that spoke torch: `fd` and the `bytes` it sent so far go to the open store,
  // unless it came from elsewhere than the job's hosts (stranger) or no round's store is open
  // (closed); either way then the connection is closed here.
  Handed hand(UniqueFd fd, const std::string& peer, std::string bytes);

 private:
  mutable std::mutex mutex_;
  StoreServer* server_ = nullptr;
  std::shared_ptr<const AdmittedHosts> admitted_;
};

}  // namespace aml::store
