// The rendezvous flags: --nnodes N or MIN:MAX, where the rendezvous is kept and how long it
// waits, torchrun's spellings and its --rdzv-conf keys among them.
#include <string_view>

#include "options.hpp"
#include "topology/host_port.hpp"
#include "topology/master.hpp"
#include "topology/numbers.hpp"
#include "topology/rdzv_backend.hpp"

namespace aml {
namespace {

using enum FlagId;

// torchrun's --rdzv-conf keys for the rendezvous' timing; the rest are etcd's access, read
// where etcd is reached (etcd_access.hpp).
struct RendezvousConf {
  std::string join_timeout, last_call_timeout;
  std::string etcd_access;            // KEY=VALUE,... of the other keys
  std::vector<std::string> not_used;  // torchrun's keys with nothing to do here
};

RendezvousConf split_conf(std::string_view conf) {
  RendezvousConf out;
  std::size_t start = 0;
  while (start < conf.size()) {
    const std::size_t comma = std::min(conf.find(',', start), conf.size());
    const std::string_view pair = conf.substr(start, comma - start);
    start = comma + 1;
    const std::string_view key = pair.substr(0, pair.find('='));
    const std::string value(pair.substr(std::min(pair.size(), key.size() + 1)));
    if (key == "join_timeout") {
      out.join_timeout = value;
    } else if (key == "last_call_timeout") {
      out.last_call_timeout = value;
    } else if (key == "close_timeout" || key == "read_timeout" || key == "is_host" ||
               key == "keep_alive_interval" || key == "keep_alive_max_attempt" ||
               key == "heartbeat" || key == "timeout" || key == "use_libuv" ||
               key == "use_agent_store") {
      out.not_used.emplace_back(key);
    } else if (!pair.empty()) {
      out.etcd_access += (out.etcd_access.empty() ? "" : ",") + std::string(pair);
    }
  }
  return out;
}

std::optional<Error> read_conf(const CommandLine& line, Options& options, bool on_etcd) {
  if (!line.has(rdzv_conf)) return std::nullopt;
  const std::string name = flag_name(line, rdzv_conf);
  RendezvousConf conf = split_conf(line.value(rdzv_conf));
  if (!conf.join_timeout.empty() && !line.has(rdzv_timeout)) {
    auto value = flag_decimal(name, conf.join_timeout, 0, true, 604800, "");
    if (!value) {
      return invalid(name, "join_timeout=" + conf.join_timeout,
                     "join_timeout=SECONDS, above 0 and up to 604800");
    }
    options.rdzv_timeout_seconds = *value;
  }
  if (!conf.last_call_timeout.empty() && !line.has(rdzv_last_call)) {
    auto value = flag_decimal(name, conf.last_call_timeout, 0, false, 86400, "");
    if (!value) {
      return invalid(name, "last_call_timeout=" + conf.last_call_timeout,
                     "last_call_timeout=SECONDS from 0 to 86400");
    }
    options.rdzv_last_call_seconds = *value;
  }
  for (const std::string& key : conf.not_used) {
    options.torchrun_notes.push_back(name + " " + key +
                                     ": not used: the launchers' own timing (--rdzv-timeout, "
                                     "--node-timeout, --rdzv-last-call) governs the rendezvous");
  }
  if (!conf.etcd_access.empty() && !on_etcd) {
    return invalid(name, conf.etcd_access,
                   "join_timeout and last_call_timeout under node 0's store (the others are "
                   "etcd's, for --rdzv-backend etcd)");
  }
  options.rdzv_conf = conf.etcd_access;
  return std::nullopt;
}

// --rdzv-endpoint under node 0's store: HOST[:PORT], port 0 for a free one on this host.
std::optional<Error> read_store_endpoint(const CommandLine& line, Options& options) {
  const std::string name = flag_name(line, rdzv_endpoint);
  const std::string text = line.value(rdzv_endpoint);
  // torchrun's HOST:0, as its --standalone gives it: a free port, which only one host can pick
  // for itself.
  const bool free_port = text.ends_with(":0") && !text.ends_with("::0");
  auto endpoint = split_host_port(name, free_port ? text.substr(0, text.size() - 2) : text);
  if (!endpoint || endpoint->host.empty()) return invalid(name, text, "HOST, HOST:PORT or HOST:0");
  options.overrides.master_addr = endpoint->host;
  const int port = free_port ? 0 : endpoint->port.value_or(kRendezvousDefaultPort);
  if (port == 0) {
    options.overrides.master_port.reset();
    options.overrides.free_master_port = true;
  } else {
    options.overrides.master_port = port;
  }
  return std::nullopt;
}

// torchrun's --standalone: one node, this host, a free port, an id of its own; the
// rendezvous flags given beside it are not used (said once).
void make_standalone(const CommandLine& line, Options& options) {
  std::string unused;
  for (FlagId id :
       {nnodes, node_rank, master_addr, master_port, rdzv_backend, rdzv_endpoint, rdzv_id}) {
    if (!line.has(id) || line[id]->spelled_as == flag_spec(id).variable) continue;
    unused += (unused.empty() ? "" : ", ") + line[id]->spelled_as;
  }
  if (!unused.empty()) {
    options.torchrun_notes.push_back("--standalone: " + unused +
                                     " not used: one node, this host, a free port");
  }
  Overrides& o = options.overrides;
  o = Overrides{.nproc_per_node = o.nproc_per_node, .nproc_counted = o.nproc_counted};
  o.nnodes = 1;
  o.standalone = true;
  o.free_master_port = true;
  options.rdzv_backend.clear();
  options.etcd_endpoints.clear();
  options.rdzv_id.clear();
}

// Where the rendezvous is kept: the node count, the backend, its endpoint, the job's id.
std::optional<Error> read_where(const CommandLine& line, Options& options) {
  if (line.has(nnodes)) {
    const std::string text = line.value(nnodes);
    auto range = parse_node_range(flag_name(line, nnodes), text);
    if (!range) return range.error();
    if (text.find(':') == std::string::npos) {
      options.overrides.nnodes = range->min;
    } else if (range->min == 1 && range->max == 1) {
      // torchrun's default, 1:1, and its elastic tutorial's: one node, nothing elastic.
      options.overrides.nnodes = 1;
    } else {
      options.overrides.nnodes_range = *range;
    }
  }
  options.rdzv_backend = line.value(rdzv_backend);
  auto on_etcd = is_etcd_backend(flag_name(line, rdzv_backend), options.rdzv_backend);
  if (!on_etcd) return on_etcd.error();
  if (*on_etcd && !line.has(rdzv_endpoint) && std::getenv("PET_RDZV_ENDPOINT") == nullptr) {
    return missing("--rdzv-endpoint", "etcd's members, HOST[:PORT],HOST[:PORT],... (" +
                                          flag_name(line, rdzv_backend) + " " +
                                          options.rdzv_backend + " keeps the rendezvous there)");
  }
  if (line.has(rdzv_endpoint) && *on_etcd) {
    const std::string name = flag_name(line, rdzv_endpoint);
    const std::string text = line.value(rdzv_endpoint);
    auto members = etcd_endpoints(name, text);
    if (!members) return members.error();
    options.etcd_endpoints = *members;
    auto https = etcd_endpoints_use_tls(name, text);
    if (!https) return https.error();
    options.etcd_https = *https;
    // The launchers' way out is found by the route to etcd; the workers' MASTER_ADDR is each
    // round's node 0.
    auto first = split_host_port(name, members->front());
    if (!first) return first.error();
    options.overrides.master_addr = first->host;
    options.overrides.master_port = first->port.value_or(kEtcdDefaultPort);
  } else if (line.has(rdzv_endpoint)) {
    if (auto error = read_store_endpoint(line, options)) return error;
  }
  options.rdzv_id = line.value(rdzv_id);
  if (line.has(rdzv_id) && options.rdzv_id.empty()) {
    return invalid(flag_name(line, rdzv_id), "", "a job id");
  }
  if (auto error = read_conf(line, options, *on_etcd)) return error;
  return std::nullopt;
}

// How long the rendezvous waits, and for whom.
std::optional<Error> read_timing(const CommandLine& line, Options& options) {
  if (line.has(rdzv_last_call)) {
    auto seconds = flag_decimal(flag_name(line, rdzv_last_call), line.value(rdzv_last_call), 0,
                                false, 86400, "seconds from 0 to 86400");
    if (!seconds) return seconds.error();
    options.rdzv_last_call_seconds = *seconds;
  }
  const std::string admit = line.value(admit_newcomers);
  if (admit == "at-once") {
    options.admit_at_once = true;
  } else if (line.has(admit_newcomers) && admit != "next-round") {
    return invalid(flag_name(line, admit_newcomers), admit, "next-round or at-once");
  }
  if (line.has(rdzv_timeout)) {
    auto seconds = flag_decimal(flag_name(line, rdzv_timeout), line.value(rdzv_timeout), 0, true,
                                604800, "seconds, above 0 and up to 604800");
    if (!seconds) return seconds.error();
    options.rdzv_timeout_seconds = *seconds;
  }
  if (line.has(node_timeout)) {
    auto seconds = flag_decimal(flag_name(line, node_timeout), line.value(node_timeout), 0, true,
                                86400, "seconds, above 0 and up to 86400");
    if (!seconds) return seconds.error();
    options.node_timeout_seconds = *seconds;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> read_rendezvous_flags(const CommandLine& line, Options& options) {
  if (line.has(standalone)) {
    make_standalone(line, options);
  } else if (auto error = read_where(line, options)) {
    return error;
  }
  return read_timing(line, options);
}

}  // namespace aml
