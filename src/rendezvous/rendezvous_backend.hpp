// The rendezvous a job's launchers meet through, as the launcher chose it (DESIGN §5): node 0's
// store, or etcd with its members and access. The node group is written in RendezvousClient
// alone; this says which engine is behind it, for errors, --dry-run and the summary.
#pragma once

#include <string>
#include <vector>

#include "etcd/etcd_access.hpp"

namespace aml {

// Which rendezvous holds the job, for errors, --dry-run and the summary.
struct RendezvousBackend {
  enum class Kind { node0_store, etcd };
  Kind kind = Kind::node0_store;
  std::vector<std::string> endpoints;  // etcd: host:port of each member
  etcd::Access access;                 // etcd: TLS and etcd's user, where required
  std::string name() const { return kind == Kind::etcd ? "etcd" : "c10d"; }
  // "node 0's store at a:29400" / "etcd at e1:2379,e2:2379".
  std::string describe(const std::string& node0_address) const;
  // What losing a node means for the job under this backend.
  std::string loss_means() const;
};

}  // namespace aml
