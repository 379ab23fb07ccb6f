// Who may use the workers' store (torch's door, DESIGN §3): the job's own hosts, by address.
// The launchers learn them as the job meets (the addresses its proven launchers came from, each
// round's members) and the store's thread reads them at each accept: shared, so locked.
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace aml::store {

class AdmittedHosts {
 public:
  AdmittedHosts() = default;  // this host's own addresses are in (read at the first need)
  // An address ("10.0.0.9"), or a name resolved to its IPv4 addresses now.
  void add(const std::string& host);
  // Whether a connection from `address` (as accept gave it) is the job's.
  bool admits(const std::string& address) const;

 private:
  void read_own_addresses() const;  // under mutex_
  mutable std::mutex mutex_;
  mutable std::set<std::string> addresses_;
  mutable bool own_read_ = false;
};

}  // namespace aml::store
