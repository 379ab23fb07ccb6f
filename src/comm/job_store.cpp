#include "comm/job_store.hpp"

#include <unistd.h>  // environ

#include <atomic>
#include <cstdlib>

#include "net/local_host.hpp"
#include "store/launchers/job_auth.hpp"
#include "topology/host_port.hpp"
#include "topology/worker_marker.hpp"

namespace aml::comm {
namespace {

std::string env_or(std::string_view name, std::string fallback) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

Result<JobStore> open_job_store(const ProcessTopology& topology, const std::string& purpose,
                                const std::string& name, std::chrono::milliseconds timeout) {
  // Every rank creates its communicators in the same order: the count names this one. The
  // restart count keeps a restarted round away from the keys of the last one.
  static std::atomic<int> created{0};
  JobStore store;
  store.prefix = "comm/" + env_or(kRestartCountVariable, "0") + "/" + name + "/" +
                 std::to_string(created++) + "-" + purpose + "/";
  const std::string launcher_store = env_or(kStoreVariable, "");
  if (!launcher_store.empty()) {
    auto where = split_host_port(kStoreVariable, launcher_store);
    if (!where) return where.error();
    if (!where->port) return invalid(std::string(kStoreVariable), launcher_store, "host:port");
    auto credentials = StoreCredentials::from_environment();
    if (!credentials) return credentials.error();
    auto client = StoreClient::connect(where->host, *where->port, env_or(kStoreTokenVariable, ""),
                                       *credentials, timeout);
    if (!client) return client.error();
    store.client.emplace(std::move(*client));
    return store;
  }
  const Topology& job = topology.job;
  if (job.master_port == 0) {
    return missing("MASTER_PORT", "a port on rank 0's host for the " + purpose +
                                      " bootstrap (or run under aml-launch, which sets it)");
  }
  const std::string token = env_or(kRunIdVariable, job.run_id.empty() ? "aml-comm" : job.run_id);
  // Without a launcher (mpirun -x AML_LAUNCH_SECRET ...): the job's secret, where given,
  // admits only the job's ranks to rank 0's store too.
  auto auth = JobAuth::resolve("", env_from(environ), nullptr);
  if (!auth) return auth.error();
  std::string dial = job.master_addr;
  if (topology.rank == 0) {
    const std::string listen = listen_address_for(job.master_addr, local_host(job.master_addr));
    auto host = StoreHost::start(listen, job.master_port, token, auth->server_auth(token),
                                 "rank 0 serves the " + purpose + " bootstrap store on MASTER_PORT",
                                 "aml::comm");
    if (!host) return host.error();
    store.host = std::move(*host);
    dial = listen == "0.0.0.0" ? "127.0.0.1" : listen;
  }
  auto client =
      StoreClient::connect(dial, job.master_port, token, auth->worker_credentials(token), timeout);
  if (!client) return client.error();
  store.client.emplace(std::move(*client));
  return store;
}

}  // namespace aml::comm
