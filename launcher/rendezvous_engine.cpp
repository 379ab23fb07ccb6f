#include "rendezvous_engine.hpp"

#include <algorithm>
#include <thread>

#include "etcd/etcd_rendezvous.hpp"
#include "net/local_host.hpp"
#include "rendezvous/group_timing.hpp"
#include "rendezvous/store_rendezvous.hpp"
#include "rendezvous/wait_progress.hpp"
#include "store/launchers/handshake.hpp"

namespace aml {
namespace {

using std::chrono::milliseconds;

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

Result<RendezvousEngine> etcd_engine(const GroupOptions& options) {
  etcd::SessionOptions session_options{
      options.backend.endpoints, "/aml-launch/" + options.token + "/", options.node_timeout,
      std::string(group_timing::kJobEndKey), options.backend.access};
  // While etcd does not answer, this node says so (wait_progress.hpp), as under node 0's store.
  WaitProgress progress;
  auto session = attempt_saying<std::shared_ptr<etcd::EtcdSession>>(
      progress, options.rdzv_timeout,
      [&session_options](milliseconds slice) {
        return etcd::EtcdSession::start(session_options, slice);
      },
      [&options](const std::string& reason, milliseconds left) {
        NodeGroup::say_dialing(options, reason, left);
      });
  if (!session) {
    Error error = session.error();
    error.expected += " (this node reaching the job's etcd within --rdzv-timeout " +
                      group_timing::seconds_text(options.rdzv_timeout) + ")";
    return error;
  }
  // Every connection of the launcher shares its session (its lease); once the lease ended
  // (the launcher was silent past it: counted lost), the next dial takes a new one, and the
  // launcher comes back as a newcomer (node_group_comeback.cpp).
  RendezvousEngine engine;
  engine.dial = [in_use = std::make_shared<std::shared_ptr<etcd::EtcdSession>>(*session)](
                    milliseconds timeout) -> Result<std::unique_ptr<RendezvousClient>> {
    if ((*in_use)->lease_ended()) {
      auto renewed = (*in_use)->renew(timeout);
      if (!renewed) return renewed.error();
      *in_use = std::move(*renewed);
    }
    return std::unique_ptr<RendezvousClient>(new etcd::EtcdRendezvous(*in_use));
  };
  return engine;
}

}  // namespace

// Node 0's store: node 0 serves it (elastic: the node at the endpoint, or on one host the
// first to take the port) and every node connects to it. etcd: every node holds a session.
Result<RendezvousEngine> rendezvous_engine_for(GroupOptions& options) {
  if (!options.admitted) options.admitted = std::make_shared<store::AdmittedHosts>();
  // The workers' torch store shares node 0's socket (DESIGN §3: one MASTER_PORT).
  if (options.serve_workers_store && !options.torch_doorway)
    options.torch_doorway = std::make_shared<store::TorchDoorway>();
  if (options.backend.kind == RendezvousBackend::Kind::etcd) return etcd_engine(options);
  RendezvousEngine engine;
  std::string dial = options.master_addr;
  if (options.self.node_rank == 0) {
    const std::string bind =
        listen_address_for(options.master_addr, local_host(options.master_addr));
    store::ServerOptions serving;
    serving.token = options.token;
    serving.auth = options.auth.server_auth(options.token);
    serving.vouched = options.admitted;  // its proven launchers' hosts: the workers' too
    serving.torch_doorway = options.torch_doorway;
    auto started = StoreHost::start_with(
        bind, options.master_port, std::move(serving),
        "node 0 serves the job's store on MASTER_PORT (the launchers' and the workers', one "
        "port), so that port must be free there",
        "aml-launch");
    if (started) {
      engine.host = std::move(*started);
      dial = bind == "0.0.0.0" ? "127.0.0.1" : bind;
    } else if (options.elastic && is_loopback(options.master_addr)) {
      // Several launchers of an elastic job on one host, meeting on loopback: the first to
      // take the port serves the store, the others join it.
      options.self.node_rank = -1;
    } else {
      return started.error();
    }
  }
  engine.dial = [dial, port = options.master_port, token = options.token, auth = options.auth,
                 member = NodeGroup::member_name(options.self)](
                    milliseconds timeout) -> Result<std::unique_ptr<RendezvousClient>> {
    // A HELLO that got no answer at all (node 0's store too busy to read it in time, or out of
    // descriptors: thousands of nodes arriving at once) is said again within the same time,
    // backing off; a store's refusal, or an answer that is not a store's, stands.
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    milliseconds pause{100};
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      auto client =
          StoreClient::connect(dial, port, token, auth.launcher_credentials(token, member),
                               std::max(left, milliseconds(1)));
      if (client) return std::unique_ptr<RendezvousClient>(new StoreRendezvous(std::move(*client)));
      if (!store::hello_unanswered(client.error().expected)) return client.error();
      // Its time is used up, not cut short: the caller tells an early failure (the store's
      // own answer) from a slice that ran out.
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
      if (Clock::now() >= deadline) return client.error();
      pause = std::min(pause * 2, milliseconds(2000));
    }
  };
  return engine;
}

}  // namespace aml
