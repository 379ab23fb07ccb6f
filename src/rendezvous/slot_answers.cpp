#include "rendezvous/slot_answers.hpp"

#include <algorithm>

#include "rendezvous/rendezvous_client.hpp"

namespace aml {
namespace {

// A record: one line per slot from the group's first up to its last answered one, then the
// answer for the group's other slots after '*'.
constexpr char kRestMark = '*';

}  // namespace

std::int64_t answer_groups(std::int64_t slots) {
  return slots <= 0
             ? 0
             : (slots + RendezvousClient::kSlotsPerAnswer - 1) / RendezvousClient::kSlotsPerAnswer;
}

std::vector<std::pair<std::string, std::string>> answer_records(
    std::string_view count_key, std::int64_t first_group, std::int64_t end_group,
    const std::map<std::int64_t, std::string>& answers, std::string_view rest) {
  std::vector<std::pair<std::string, std::string>> records;
  for (std::int64_t group = first_group; group < end_group; ++group) {
    const std::int64_t first = group * RendezvousClient::kSlotsPerAnswer;
    const std::int64_t end = first + RendezvousClient::kSlotsPerAnswer;
    std::int64_t last = first - 1;  // the group's last slot with an answer of its own
    for (auto it = answers.lower_bound(first); it != answers.end() && it->first < end; ++it) {
      last = it->first;
    }
    std::string record;
    for (std::int64_t slot = first; slot <= last; ++slot) {
      auto answer = answers.find(slot);
      std::string line(answer == answers.end() ? rest : std::string_view(answer->second));
      std::replace(line.begin(), line.end(), '\n', ' ');  // an error's text: one line
      record += line + "\n";
    }
    record += kRestMark;
    record += rest;
    records.emplace_back(RendezvousClient::answer_key(count_key, first), std::move(record));
  }
  return records;
}

std::string answer_in(std::string_view record, std::int64_t slot) {
  std::int64_t line = slot % RendezvousClient::kSlotsPerAnswer;
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = std::min(record.find('\n', at), record.size());
    const std::string_view text = record.substr(at, end - at);
    if (!text.empty() && text.front() == kRestMark) return std::string(text.substr(1));
    if (end == record.size()) return "";  // no rest line: not a record
    if (line-- == 0) return std::string(text);
    at = end + 1;
  }
}

}  // namespace aml
