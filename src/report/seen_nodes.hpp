// The other nodes as the job's node 0 wrote of them (--job-events-file: node_joined,
// node_returned, node_moved, failure_elsewhere, node_lost, node_benched): a row for each node whose
// own events file is not given, so that the job's file alone draws every node. Such a row's bars
// are node 0's while the node held a seat (the nodes meet, run and stop together); its marks,
// what node 0 heard of it. A node is its launcher (host and pid, from the line that seated it):
// launchers sharing a host name (a test's namespaces) stay apart.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "report/job_story.hpp"

namespace aml {

class SeenNodes {
 public:
  // One line of the launcher drawn as rows[row] ("_ms": its time), where it names another node.
  void note(const nlohmann::ordered_json& event, std::size_t row);
  // A row for each node named whose own lines are not among `rows`, appended to them.
  void add_rows(std::vector<StoryRow>& rows) const;

 private:
  struct Seen {
    std::string host;
    std::string run_id;
    long pid = 0;        // its launcher's; 0: not known (no line seated it)
    int node_rank = -1;  // its last
    std::size_t by = 0;  // the row of the node 0 that wrote of it
    std::vector<std::pair<long long, long long>> seated;  // [from, to); to -1: to the end
    bool gone = false;                                    // lost or benched, last
    std::vector<StoryMark> marks;
  };
  Seen& node_named(const nlohmann::ordered_json& event, const nlohmann::ordered_json& details);

  std::map<std::string, Seen> seen_;            // by launcher
  std::map<std::string, std::string> seat_of_;  // run id and node rank: its launcher
};

}  // namespace aml
