// The launcher picks the engine its node group meets through (DESIGN §5): node 0's store,
// served here when this launcher is node 0, or a session with the job's etcd. The node group
// itself knows only the RendezvousClient interface.
#pragma once

#include <aml/error.hpp>

#include "rendezvous/node_group.hpp"

namespace aml {

// `options.self.node_rank` becomes -1 where another launcher of an elastic job on this host
// took node 0's port first.
Result<RendezvousEngine> rendezvous_engine_for(GroupOptions& options);

}  // namespace aml
