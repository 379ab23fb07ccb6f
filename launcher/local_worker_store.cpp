#include "local_worker_store.hpp"

#include "net/local_host.hpp"

namespace aml {

Result<std::unique_ptr<StoreHost>> serve_local_worker_store(const Topology& t) {
  const std::string bind = listen_address_for(t.master_addr, local_host(t.master_addr));
  return StoreHost::start_workers_store(
      bind, t.master_port, std::make_shared<store::AdmittedHosts>(),
      "this launcher serves its workers' torch store on MASTER_PORT, so that port must be free "
      "here (or --worker-store torch: rank 0's worker serves it)",
      "aml-launch");
}

}  // namespace aml
