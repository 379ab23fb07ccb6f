#include "rendezvous/round_answers.hpp"

#include <algorithm>
#include <charconv>

#include "rendezvous/rendezvous_client.hpp"

namespace aml {
namespace {

// A record: a line "NUMBER ANSWER" per launcher answered, then the rest's answer after '*'.
constexpr char kRestMark = '*';

}  // namespace

std::vector<std::pair<std::string, std::string>> answer_records(
    std::string_view count_key, const std::map<long, std::string>& answers, std::string_view rest) {
  std::vector<std::string> lines(RendezvousClient::kAnswerKeys);
  for (const auto& [launcher, answer] : answers) {
    std::string line = answer;
    std::replace(line.begin(), line.end(), '\n', ' ');  // an error's text: one line
    lines[RendezvousClient::answer_index(launcher)] += std::to_string(launcher) + " " + line + "\n";
  }
  std::vector<std::pair<std::string, std::string>> records;
  records.reserve(lines.size());
  for (std::size_t index = 0; index < lines.size(); ++index) {
    records.emplace_back(RendezvousClient::answer_key(count_key, static_cast<long>(index)),
                         lines[index] + kRestMark + std::string(rest));
  }
  return records;
}

std::string answer_in(std::string_view record, long launcher) {
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = std::min(record.find('\n', at), record.size());
    const std::string_view line = record.substr(at, end - at);
    if (!line.empty() && line.front() == kRestMark) return std::string(line.substr(1));
    if (end == record.size()) return "";  // no rest line: not a record
    long number = 0;
    const auto [past, failed] = std::from_chars(line.data(), line.data() + line.size(), number);
    if (failed == std::errc() && number == launcher && past < line.data() + line.size() &&
        *past == ' ') {
      return std::string(past + 1, line.data() + line.size());
    }
    at = end + 1;
  }
}

}  // namespace aml
