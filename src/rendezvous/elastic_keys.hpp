// The keys and clocks of an elastic job's rounds (DESIGN §5), shared by the launcher that gives
// a round's seats (node_group_elastic.cpp) and those that take them (node_group_seat.cpp).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace aml::elastic_keys {

using std::chrono::milliseconds;

// How often a waiting launcher looks whether the job ended, and node 0 whether a launcher it
// waits for is gone.
inline constexpr milliseconds kWaitingLook{200};
inline constexpr milliseconds kEndReadWait{2000};
// How long a launcher waiting for its seat blocks on node 0's answer before it looks whether
// the job ended: thousands of waiting launchers must not poll the store.
inline constexpr milliseconds kSeatWait{2000};
// A slot's place (or a round's count) when the job ended while it waited.
inline constexpr std::string_view kEndedMark = "end";
// A slot's place when it was taken after its round's coordinator had counted the slots.
inline constexpr std::string_view kLateMark = "late";
inline constexpr std::string_view kNextRoundKey = "aml/elastic/next";
inline constexpr std::string_view kIdsKey = "aml/elastic/ids";
// What the survivors of node 0's loss tell the node 0 that came back: the round to resume, the
// restarts used (JSON).
inline constexpr std::string_view kResumeKey = "aml/elastic/resume";

inline std::string gone_key(long id) { return "aml/elastic/gone/" + std::to_string(id); }
inline std::string end_read_key(long id) { return "aml/elastic/end-read/" + std::to_string(id); }

}  // namespace aml::elastic_keys
