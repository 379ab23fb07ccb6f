// Source 11: IBM Spectrum LSF with jsrun (JSM_NAMESPACE_*). Node 0 is the first compute host
// of LSB_DJOB_RANKFILE: its first line is the launch node, which runs no rank.
#include "topology/host_port.hpp"
#include "topology/master.hpp"
#include "topology/process_level.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

bool present(const Env& env) { return has(env, "JSM_NAMESPACE_RANK"); }

Result<std::optional<std::string>> master_from_rankfile(const DetectContext& ctx) {
  const std::string* path = find(ctx.env, "LSB_DJOB_RANKFILE");
  if (path == nullptr) return std::optional<std::string>();
  auto contents = ctx.machine.read_file ? ctx.machine.read_file(*path) : std::nullopt;
  if (!contents)
    return invalid("LSB_DJOB_RANKFILE", *path, "a readable file listing the job's hosts");
  std::vector<std::string> hosts;
  std::size_t start = 0;
  while (start < contents->size()) {
    std::size_t end = contents->find('\n', start);
    if (end == std::string::npos) end = contents->size();
    std::string line = contents->substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) hosts.push_back(line);
    start = end + 1;
  }
  if (hosts.empty()) return invalid("LSB_DJOB_RANKFILE", *path, "a file listing at least one host");
  const std::string& host = hosts.size() > 1 ? hosts[1] : hosts[0];
  auto checked = split_host_port("LSB_DJOB_RANKFILE", host);
  if (!checked || checked->port) {
    return invalid("LSB_DJOB_RANKFILE", *path, "host names, one a line (not \"" + host + "\")");
  }
  return std::optional<std::string>(checked->host);
}

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto fields = read_process_fields(env, {"JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE",
                                          "JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_LOCAL_SIZE"});
  if (!fields) return fields.error();
  auto topology = process_level_topology(*fields, "lsf");
  if (!topology) return topology.error();
  Topology& t = *topology;
  if (auto error = read_master_env(env, t)) return *error;
  if (t.master_addr.empty()) {
    auto addr = master_from_rankfile(ctx);
    if (!addr) return addr.error();
    t.master_addr = addr->value_or("");
  }
  t.reason = "JSM_NAMESPACE_RANK is set: jsrun (LSF) started this process";
  if (const std::string* job = find(env, "LSB_JOBID")) t.run_id = *job;
  return Detected{std::move(t), "MASTER_ADDR or LSB_DJOB_RANKFILE"};
}

}  // namespace

const Source kLsfSource{"lsf", present, read};

}  // namespace aml
