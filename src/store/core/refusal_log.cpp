#include "store/core/refusal_log.hpp"

namespace aml::store {

void RefusalLog::refused(const std::string& address, const std::string& why,
                         Clock::time_point now) {
  ++total_;
  flush(now);
  const std::string seen = address + " " + why;
  if (!said_.count(seen) && lines_in_window_ < kLinesPerWindow && sink_) {
    if (said_.size() < kAddressesKept) said_.insert(seen);
    ++lines_in_window_;
    sink_("the rendezvous store refused a connection from " + address + ": " + why +
          " (further such refusals are counted, not said)");
    return;
  }
  ++unsaid_;
  if (unsaid_from_.size() < kAddressesKept) unsaid_from_.insert(address);
}

void RefusalLog::flush(Clock::time_point now) {
  if (now - window_start_ < kWindow) return;
  if (unsaid_ > 0 && sink_) {
    sink_("the rendezvous store refused " + std::to_string(unsaid_) + " more connection(s) from " +
          std::to_string(unsaid_from_.size()) + (unsaid_from_.size() >= kAddressesKept ? "+" : "") +
          " address(es) in the last " + std::to_string(kWindow.count()) + " s");
  }
  window_start_ = now;
  lines_in_window_ = 0;
  unsaid_ = 0;
  unsaid_from_.clear();
}

}  // namespace aml::store
