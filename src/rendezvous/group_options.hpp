// What a node's launcher joins its job's nodes with (node_group.hpp): the rendezvous, the job's
// proof, this node's own description, the clocks, the elastic job's range and its callbacks.
#pragma once

#include <aml/topology.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "health/health_checks.hpp"
#include "rendezvous/bench.hpp"
#include "rendezvous/node_info.hpp"
#include "rendezvous/rendezvous_backend.hpp"
#include "store/core/store_host.hpp"
#include "store/launchers/job_auth.hpp"
#include "store/torch/admitted_hosts.hpp"
#include "store/torch/torch_doorway.hpp"

namespace aml {

struct GroupOptions {
  RendezvousBackend backend;  // node 0's store (the default) or etcd
  std::string master_addr;
  int master_port = 0;  // the store's port on node 0 (the job's MASTER_PORT)
  std::string token;    // every node presents it; the job's rendezvous id (public)
  JobAuth auth;         // how the nodes prove they belong to the job, and the store does
  NodeInfo self;        // addr is filled in on joining
  std::chrono::milliseconds rdzv_timeout{600000};
  // A node without a heartbeat this long is lost; no other wait of a running job is shorter.
  std::chrono::milliseconds node_timeout{60000};
  // An elastic job (DESIGN §5): no fixed node ranks; the node serving the store is node 0 and
  // gives the others theirs at each round (self.node_rank is 0 there, -1 elsewhere). Under
  // etcd, whichever launcher claims a round first gives the seats of that round.
  std::optional<NodeRange> elastic;
  std::chrono::milliseconds last_call{3000};
  bool admit_at_once = false;  // a newcomer ends a round that has fewer than the most nodes
  // Elastic: what a launcher waiting for a round says on its stderr (a hot spare's wait).
  std::function<void(const std::string&)> say;
  // Elastic: this launcher begins to wait for a seat, once a wait: as a hot spare
  // ("spare_waiting"), or benched, sitting out ("benched_waiting"); and why.
  std::function<void(const char* kind, const std::string& why)> waits;
  // Each round's node 0 serves its workers' store in torch's protocol (DESIGN §3), open to
  // the job's hosts alone; false: rank 0's worker hosts torch's own (--worker-store torch).
  bool serve_workers_store = true;
  // torch's door on the store's socket (store/torch/torch_doorway.hpp): node 0's store, or under
  // etcd the one each round's node 0 serves, hands torch's connections through it to the
  // round's workers' store.
  std::shared_ptr<store::TorchDoorway> torch_doorway;
  bool relay_asked = false;      // --worker-store relay: every node's workers through its relay
  bool jax_coordinator = false;  // --framework jax: node 0 picks the coordinator's port
  // Every node watches the round's notices (issue 55): this node can hear notices of the job's
  // end (its platform's, or --notice-signal), and so, as they run alike, can the others.
  bool watch_notices = false;
  // Who may use it: this host, the addresses node 0's proven launchers came from, and every
  // round's members (NodeGroup::start makes it).
  std::shared_ptr<store::AdmittedHosts> admitted;
  // This node's health checks (DESIGN §5): begun as each round's rendezvous begins, their
  // verdict in what this node says of itself; a failing node is never seated. None: no checks.
  std::shared_ptr<HealthWatch> health;
  int bench_after = 2;  // elastic: the rounds a node's rank may fail first before it is benched
  // Elastic, on the launcher that gives a round's seats: each node it benches, as it does
  // (--bad-nodes-file). Fixed-size, on every node that reads it: each node whose failed
  // health check stopped the job (the scheduler's retry is the one moment to leave it out).
  std::function<void(const BenchedNode&)> benched;
};

}  // namespace aml
