#include "report_command.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "report/report_html.hpp"
#include "util/replace_file.hpp"

namespace aml {
namespace {

constexpr const char* kUsage =
    "usage: aml-launch report [-o FILE.html] EVENTS.jsonl...\n"
    "\n"
    "The job's events (--events-file, or DIR/events.jsonl under --log-dir) of one launcher or\n"
    "of all of them, as one HTML page that needs no network: the job's figures (rounds,\n"
    "restarts, failures, goodput) above a row per launcher along time, its phases as bars\n"
    "(rendezvous, running, recovery, spare, stopping) and its marks (a failure and its rank,\n"
    "a node benched, a spare taken, a stop, a notice, a hang). Rows where nothing happened\n"
    "fold into one beyond 24 launchers. The job's node 0's --job-events-file alone draws\n"
    "every node: the others as node 0 saw them (joining, failing, lost, benched, back).\n"
    "\n"
    "  -o, --output FILE   where the page goes (default: job-report.html)\n"
    "  -h, --help          this text\n";

int usage_error(const std::string& what) {
  std::cerr << "aml-launch report: error: " << what << "\n" << kUsage;
  return 2;
}

}  // namespace

int run_report(int argc, char** args) {
  std::string output = "job-report.html";
  std::vector<EventFile> files;
  for (int i = 0; i < argc; ++i) {
    const std::string_view word = args[i];
    if (word == "-h" || word == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (word == "-o" || word == "--output") {
      if (i + 1 >= argc) return usage_error(std::string(word) + " needs a file after it");
      output = args[++i];
      continue;
    }
    if (word.starts_with("--output=")) {
      output = std::string(word.substr(9));
      continue;
    }
    if (word.starts_with("-") && word != "-") {
      return usage_error("unknown option " + std::string(word));
    }
    std::ifstream in(word == "-" ? "/dev/stdin" : std::string(word));
    if (!in) {
      std::cerr << "aml-launch report: error: cannot read " << word << ": " << std::strerror(errno)
                << "\n";
      return 2;
    }
    std::ostringstream text;
    text << in.rdbuf();
    files.push_back({std::string(word), text.str()});
  }
  if (files.empty()) return usage_error("no event file given");
  const JobStory story = read_job_story(files);
  if (story.rows.empty()) {
    std::cerr << "aml-launch report: error: no event in "
              << (files.size() == 1 ? files.front().name : "any of the files")
              << " (an --events-file of aml-launch holds one JSON object a line)\n";
    return 2;
  }
  for (const std::string& skipped : story.skipped)
    std::cerr << "aml-launch report: left out " << skipped << "\n";
  if (!replace_file(output, report_html(story))) {
    std::cerr << "aml-launch report: error: cannot write " << output << ": " << std::strerror(errno)
              << "\n";
    return 2;
  }
  const auto seen = std::count_if(story.rows.begin(), story.rows.end(),
                                  [](const StoryRow& row) { return !row.seen_by.empty(); });
  std::cerr << "aml-launch report: wrote " << output << ": " << story.rows.size() << " launcher(s)"
            << (seen > 0 ? " (" + std::to_string(seen) + " as node 0 saw them)" : std::string())
            << ", " << story.rounds << " round(s), " << story.failures << " failure(s), "
            << story.restarts.size() << " restart(s)\n";
  return 0;
}

}  // namespace aml
