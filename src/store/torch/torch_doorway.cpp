#include "store/torch/torch_doorway.hpp"

#include "store/core/store_server.hpp"

namespace aml::store {

void TorchDoorway::open(StoreServer* server, std::shared_ptr<const AdmittedHosts> admitted) {
  std::lock_guard lock(mutex_);
  server_ = server;
  admitted_ = std::move(admitted);
}

void TorchDoorway::close() {
  std::lock_guard lock(mutex_);
  server_ = nullptr;
  admitted_.reset();
}

TorchDoorway::Handed TorchDoorway::hand(UniqueFd fd, const std::string& peer, std::string bytes) {
  std::lock_guard lock(mutex_);
  if (server_ == nullptr) return Handed::closed;
  if (admitted_ && !admitted_->admits(peer)) return Handed::stranger;
  server_->adopt(std::move(fd), peer, std::move(bytes));
  return Handed::taken;
}

}  // namespace aml::store
