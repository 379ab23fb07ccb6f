// libFuzzer target over a flight recorder dump as the launcher reads it at a hang and at each
// --straggler-check sample: the pickle subset, the digest, the crossing forms, the verdict and
// the lateness, for any bytes. Nothing may crash, loop, or read past the input; a dump past its
// bounds is an error, never a value.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "flight/collective_digest.hpp"
#include "flight/collective_verdict.hpp"
#include "flight/pickle_subset.hpp"
#include "flight/rank_lateness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  aml::PickleLimits limits;
  limits.max_values = 100'000;  // small, so that doubling inputs are cut quickly
  auto value =
      aml::read_pickle_subset(std::string_view(reinterpret_cast<const char*>(bytes), size), limits);
  if (!value) return 0;
  auto groups = aml::digest_flight_dump(*value);
  if (!groups) return 0;
  aml::RankCollectives mine;
  mine.status = aml::RankCollectives::Status::read;
  mine.groups = *groups;
  // Across nodes and back, the same; beside a rank with nothing, a verdict.
  const aml::RankCollectives again = aml::collectives_from_json(aml::collectives_json(mine));
  if (aml::collectives_json(again) != aml::collectives_json(mine)) __builtin_trap();
  aml::RankCollectives empty;
  empty.status = aml::RankCollectives::Status::read;
  (void)aml::collective_verdict({{0, 0, &mine}, {1, 0, &again}, {2, 1, &empty}});
  // The straggler check's reading of the same dump: two ranks of it, one shifted a second.
  auto recent = aml::digest_flight_dump(*value, 16, {64});
  if (!recent) __builtin_trap();  // the same dump read for more cannot turn bad
  std::vector<aml::RankCalls> ranks = {{0, 0, *recent}, {1, 1, *recent}};
  const auto crossed = aml::rank_calls_from_json(
      nlohmann::json::parse(aml::rank_calls_json({ranks[1]}, 1'000'000'000).dump()));
  ranks.insert(ranks.end(), crossed.begin(), crossed.end());
  (void)aml::measure_lateness(ranks);
  return 0;
}
