#include "rendezvous/rendezvous_backend.hpp"

namespace aml {

std::string RendezvousBackend::describe(const std::string& node0_address) const {
  if (kind == Kind::node0_store) return "node 0's store at " + node0_address;
  std::string text = "etcd at ";
  for (std::size_t i = 0; i < endpoints.size(); ++i) text += (i ? "," : "") + endpoints[i];
  return text;
}

std::string RendezvousBackend::loss_means() const {
  if (kind == Kind::etcd) {
    return "any node may be lost, node 0 included: an elastic job's next round forms without "
           "it; the job ends only when etcd itself is unreachable for --node-timeout";
  }
  return "node 0 serves the rendezvous: if it is lost, an elastic job's others wait --rdzv-timeout "
         "for its "
         "address to serve again (a restarted pod), else the job ends (--rdzv-backend etcd "
         "survives any node's loss); any other node's loss ends only the round of an elastic job";
}

}  // namespace aml
