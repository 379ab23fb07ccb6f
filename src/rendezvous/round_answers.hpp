// A round's answers (DESIGN §5): each launcher's place (its seat, "spare", "late", "end" or an
// error), given by whoever gives the round's seats. The launchers' numbers share
// RendezvousClient::kAnswerKeys keys (answer_key), each written once with the answers of the
// launchers it holds and the rest's ("late", "end") for every other launcher: a thousand seats
// are 64 puts, not a thousand, and a launcher knows its key before it counts in, so that it may
// watch it before the round opens (under etcd each put is a raft write on every member and an
// event for each of its watchers).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aml {

// The round's records, as key and value, for the count at count_key: every one of its
// kAnswerKeys keys, in the order of their index, each with the answers (by launcher number)
// it holds and `rest` for every other launcher.
std::vector<std::pair<std::string, std::string>> answer_records(
    std::string_view count_key, const std::map<long, std::string>& answers, std::string_view rest);

// A launcher's answer in its key's record ("" where the record is not one).
std::string answer_in(std::string_view record, long launcher);

}  // namespace aml
