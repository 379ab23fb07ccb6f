#include "store/core/store_server.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>

#include "store/core/listen_socket.hpp"
#include "store/core/store_core.hpp"
#include "store/launchers/launchers_door.hpp"
#include "store/torch/torch_door.hpp"

namespace aml::store {

namespace {

Error socket_error(const std::string& what, const std::string& where) {
  return invalid("store " + what, where, std::string("to work (") + std::strerror(errno) + ")");
}

std::unique_ptr<StoreDoor> built_in_door(StoreCore& core) {
  switch (core.options().door) {
    case Door::aml:
      return std::make_unique<LaunchersDoor>(core);
    case Door::torch:
      return std::make_unique<TorchDoor>(core);
  }
  return nullptr;
}

// The core over `listener` (none: behind a doorway), with its door.
Result<std::unique_ptr<StoreCore>> open_core(UniqueFd listener, int port, ServerOptions options,
                                             const std::string& where,
                                             const StoreServer::DoorMaker& door) {
  UniqueFd epoll(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll) return socket_error("epoll", where);
  UniqueFd wakeup(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wakeup) return socket_error("eventfd", where);
  auto core = std::make_unique<StoreCore>(std::move(listener), std::move(epoll), std::move(wakeup),
                                          port, std::move(options));
  core->set_door(door(*core));
  return core;
}

}  // namespace

Result<std::unique_ptr<StoreServer>> StoreServer::listen(const std::string& bind_address, int port,
                                                         ServerOptions options) {
  return listen(bind_address, port, std::move(options), built_in_door);
}

Result<std::unique_ptr<StoreServer>> StoreServer::listen(const std::string& bind_address, int port,
                                                         ServerOptions options,
                                                         const DoorMaker& door) {
  auto listening = listen_tcp(bind_address, port, "store");
  if (!listening) return listening.error();
  auto core = open_core(std::move(listening->fd), listening->port, std::move(options),
                        bind_address + ":" + std::to_string(port), door);
  if (!core) return core.error();
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(*core)));
}

Result<std::unique_ptr<StoreServer>> StoreServer::behind_doorway(int port, ServerOptions options) {
  auto core = open_core(UniqueFd(), port, std::move(options), "port " + std::to_string(port),
                        built_in_door);
  if (!core) return core.error();
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(*core)));
}

StoreServer::StoreServer(std::unique_ptr<StoreCore> core) : core_(std::move(core)) {}
StoreServer::~StoreServer() = default;

void StoreServer::adopt(UniqueFd fd, std::string peer, std::string first_bytes) {
  core_->adopt(std::move(fd), std::move(peer), std::move(first_bytes));
}
int StoreServer::port() const { return core_->port(); }
int StoreServer::epoll_fd() const { return core_->epoll_fd(); }
void StoreServer::poll_once(int timeout_ms) { core_->poll_once(timeout_ms); }
void StoreServer::run() { core_->run(); }
void StoreServer::stop() { core_->stop(); }
std::size_t StoreServer::connection_count() const { return core_->connection_count(); }
std::size_t StoreServer::key_count() const { return core_->key_count(); }
std::size_t StoreServer::pending_wait_entries() const { return core_->pending_wait_entries(); }
std::size_t StoreServer::connection_memory() const { return core_->connection_memory(); }
std::size_t StoreServer::unproven_count() const { return core_->unproven_count(); }
std::size_t StoreServer::refusals() const { return core_->refusals(); }

}  // namespace aml::store
