// A job's generation in etcd (DESIGN §5): a job id is often used again (a Kubeflow job's name,
// restarted whole), so each run of it has a prefix of its own, the next one once the last run
// wrote its end. Every launcher of a run agrees on it through a compare-and-set.
#include <cstdlib>

#include "etcd/base64.hpp"
#include "etcd/etcd_session.hpp"
#include "etcd/gateway_json.hpp"

namespace aml::etcd {

using nlohmann::json;

// The generation whose job has not ended: the last one, or a new one made by the first
// launcher that finds the last one ended (a compare-and-set: every launcher agrees).
Result<bool> EtcdSession::join_generation(Clock::time_point deadline) {
  const std::string counter = options_.prefix + "generation";
  auto ranged = [](const json& answer, std::size_t i) {
    const json responses = answer.value("responses", json::array());
    return i < responses.size()
               ? responses[i].value("response_range", json::object()).value("kvs", json::array())
               : json::array();
  };
  // The generation and the end of the one guessed (the one seen last; at first 0) in one
  // transaction: a job's id is seldom used again.
  std::string guess = "0";
  for (;;) {
    auto read = call("/v3/kv/txn",
                     {{"success", json::array({{{"request_range", {{"key", to_base64(counter)}}}},
                                               {{"request_range",
                                                 {{"key", to_base64(options_.prefix + guess + "/" +
                                                                    options_.ended_key)}}}}})}},
                     deadline);
    if (!read) return read.error();
    const json kvs = ranged(*read, 0);
    const std::string generation =
        kvs.empty() ? "0" : from_base64(text_of(kvs.front(), "value")).value_or("0");
    const std::string under = options_.prefix + generation + "/";
    json ended_kvs = ranged(*read, 1);
    if (generation != guess) {
      auto ended = call("/v3/kv/range", {{"key", to_base64(under + options_.ended_key)}}, deadline);
      if (!ended) return ended.error();
      ended_kvs = ended->value("kvs", json::array());
    }
    guess = generation;
    if (options_.ended_key.empty() || ended_kvs.empty()) {
      options_.prefix = under;
      options_.generation = std::atoi(generation.c_str());
      return true;
    }
    // The counter as read (absent: generation 0 was never moved).
    const json compare = holds(to_base64(counter), kvs.empty() ? "" : generation);
    const std::string next = std::to_string(std::atoll(generation.c_str()) + 1);
    json put = {{"key", to_base64(counter)}, {"value", to_base64(next)}};
    auto moved = call(
        "/v3/kv/txn",
        {{"compare", json::array({compare})}, {"success", json::array({{{"request_put", put}}})}},
        deadline);
    if (!moved) return moved.error();
    if (moved->value("succeeded", false)) {
      // The ended run's keys go with it, but its end: a launcher of it that was away (paused,
      // cut off: it comes back under a new lease in its own run) reads the end there, and ends.
      // And but its wills: a launcher of it still finishing (its lease alive) would be heard
      // lost by their deletion; they go with their leases.
      const std::string end = under + options_.ended_key;
      const std::string wills = under + std::string(kWills);
      const std::pair<std::string, std::string> ranges[] = {
          {under, end}, {end + '\0', wills}, {prefix_end(wills), prefix_end(under)}};
      for (const auto& [from, to] : ranges) {
        if (from >= to) continue;
        (void)call("/v3/kv/deleterange", {{"key", to_base64(from)}, {"range_end", to_base64(to)}},
                   deadline);
      }
    }
  }
}

}  // namespace aml::etcd
