// Who is a straggler (DESIGN §6, --straggler-check): a rank last by more than a share of the
// step in `needed` of the last `window` samples. One sample's noise (a rank that paused for a
// moment) names nobody; a rank named is named once, and again only after it was not one.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <set>

#include "flight/rank_lateness.hpp"

namespace aml {

class StragglerWatch {
 public:
  explicit StragglerWatch(double share, std::size_t window = 5, std::size_t needed = 3)
      : share_(share), window_(window), needed_(needed) {}

  struct Named {
    LatenessSample::Rank rank;  // its lateness in this sample
    double step_seconds = 0;
    double share = 0;       // of the step, in this sample
    std::size_t times = 0;  // the samples of the last `window` it was last in
    std::size_t of = 0;
  };
  // The rank named by this sample, if one is now.
  std::optional<Named> add(const LatenessSample& sample);
  double share() const { return share_; }

 private:
  double share_;
  std::size_t window_, needed_;
  std::deque<int> late_;  // each sample's rank last by more than the share (-1: none)
  std::set<int> named_;
};

}  // namespace aml
