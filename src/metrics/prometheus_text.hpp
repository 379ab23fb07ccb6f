// Prometheus's text exposition format (version 0.0.4), written: a family's HELP and TYPE, then
// its samples; label values escaped; a histogram's buckets, sum and count.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace aml {

class PrometheusText {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  // `type`: counter, gauge or histogram. The family's samples follow.
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, double value, Labels labels = {});
  // A family of one sample without labels.
  void single(std::string_view name, std::string_view type, std::string_view help, double value) {
    family(name, type, help);
    sample(name, value);
  }
  // A whole histogram family of `values` over `bounds` (ascending; +Inf added).
  void histogram(std::string_view name, std::string_view help, std::span<const double> bounds,
                 std::span<const double> values);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A number as the format writes it: integers without a fraction, "+Inf", "NaN".
std::string prometheus_number(double value);

}  // namespace aml
