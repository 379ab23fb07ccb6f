#include "metrics/prometheus_text.hpp"

#include <cmath>
#include <cstdio>

namespace aml {
namespace {

void append_escaped(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string prometheus_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[40];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.6g", value);
  }
  return text;
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  for (char c : help) text_ += c == '\n' ? ' ' : c;  // a HELP line is one line
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void PrometheusText::sample(std::string_view name, double value, Labels labels) {
  text_ += name;
  if (labels.size() > 0) {
    text_ += '{';
    bool first = true;
    for (const auto& [label, label_value] : labels) {
      if (!first) text_ += ',';
      first = false;
      text_ += label;
      text_ += "=\"";
      append_escaped(text_, label_value);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += prometheus_number(value);
  text_ += '\n';
}

void PrometheusText::histogram(std::string_view name, std::string_view help,
                               std::span<const double> bounds, std::span<const double> values) {
  family(name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  double total = 0;
  for (double v : values) total += v;
  for (double bound : bounds) {
    std::size_t at_most = 0;
    for (double v : values) at_most += v <= bound ? 1 : 0;
    const std::string le = prometheus_number(bound);
    sample(bucket, static_cast<double>(at_most), {{"le", le}});
  }
  sample(bucket, static_cast<double>(values.size()), {{"le", "+Inf"}});
  sample(std::string(name) + "_sum", total);
  sample(std::string(name) + "_count", static_cast<double>(values.size()));
}

}  // namespace aml
