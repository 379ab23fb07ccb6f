#include "local_worker_store.hpp"

#include "net/local_host.hpp"

namespace aml {

Result<LocalWorkerStores> serve_local_worker_stores(const Topology& t, const PlanInputs& inputs) {
  LocalWorkerStores stores;
  const std::string bind = listen_address_for(t.master_addr, local_host(t.master_addr));
  auto torch = StoreHost::start_workers_store(
      bind, t.master_port, std::make_shared<store::AdmittedHosts>(),
      "this launcher serves its workers' torch store on MASTER_PORT, so that port must be free "
      "here (or --worker-store torch: rank 0's worker serves it)",
      "aml-launch", StoreHost::Serving::at_serve);
  if (!torch) return torch.error();
  stores.torch = std::move(*torch);
  if (inputs.local_store_port != 0) {
    // Loopback alone: every worker of the job is on this host.
    auto rank_library =
        StoreHost::start("127.0.0.1", inputs.local_store_port, inputs.store_token,
                         store::ServerAuth{}, "this launcher serves its workers' AML_LAUNCH_STORE",
                         "aml-launch", StoreHost::Serving::at_serve);
    if (!rank_library) return rank_library.error();
    stores.rank_library = std::move(*rank_library);
  }
  return stores;
}

}  // namespace aml
