#include "flight/straggler_watch.hpp"

#include <algorithm>

namespace aml {

std::optional<StragglerWatch::Named> StragglerWatch::add(const LatenessSample& sample) {
  const bool late = sample.last >= 0 && sample.share() > share_;
  late_.push_back(late ? sample.ranks[sample.last].rank : -1);
  if (late_.size() > window_) late_.pop_front();
  // Named ones that are no longer: they may be named again.
  std::erase_if(named_, [&](int rank) {
    return static_cast<std::size_t>(std::count(late_.begin(), late_.end(), rank)) < needed_;
  });
  if (!late) return std::nullopt;
  const int rank = sample.ranks[sample.last].rank;
  const auto times = static_cast<std::size_t>(std::count(late_.begin(), late_.end(), rank));
  if (times < needed_ || !named_.insert(rank).second) return std::nullopt;
  return Named{sample.ranks[sample.last], sample.step_seconds, sample.share(), times, late_.size()};
}

}  // namespace aml
