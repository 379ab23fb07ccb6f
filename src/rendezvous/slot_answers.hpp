// The answers to a round's slots (DESIGN §5): each slot's place (its seat, "spare", "late",
// "end" or an error), given by whoever gives the round's seats. A key answers a group of
// slots (RendezvousClient::answer_key) and is written once, answering every slot of its
// group: a thousand seats are sixteen puts, not a thousand (under etcd each put is a raft
// write on every member and an event for its watcher).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aml {

// How many groups the slots [0, slots) fill: the groups one writes.
std::int64_t answer_groups(std::int64_t slots);

// The records of groups [first_group, end_group) of the count at count_key, as key and value:
// each slot's answer from `answers` (by slot), `rest` for the slots of those groups without
// one (taken or not yet).
std::vector<std::pair<std::string, std::string>> answer_records(
    std::string_view count_key, std::int64_t first_group, std::int64_t end_group,
    const std::map<std::int64_t, std::string>& answers, std::string_view rest);

// A slot's answer in its group's record ("" where the record is not one).
std::string answer_in(std::string_view record, std::int64_t slot);

}  // namespace aml
