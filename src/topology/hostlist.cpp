#include "topology/hostlist.hpp"

#include <string>

namespace aml {
namespace {

// One entry is a sequence of parts; a part is literal text or the choices of one bracket group.
using Part = std::vector<std::string>;

struct Parser {
  std::string_view variable;
  std::string_view text;
  std::size_t max_hosts;

  Error fail(const std::string& why) const {
    return invalid(std::string(variable), std::string(text),
                   "a Slurm hostlist such as node[01-04,7],login1 (" + why + ")");
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  static std::string padded(unsigned long long value, std::size_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
    return digits;
  }

  // "001-004,7" -> {"001","002","003","004","7"}
  Result<Part> range_choices(std::string_view body) const {
    Part choices;
    std::size_t start = 0;
    while (start <= body.size()) {
      std::size_t comma = body.find(',', start);
      std::string_view range = body.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      std::size_t dash = range.find('-');
      std::string_view low = range.substr(0, dash);
      std::string_view high = dash == std::string_view::npos ? low : range.substr(dash + 1);
      auto numeric = [](std::string_view s) {
        if (s.empty() || s.size() > 9) return false;
        for (char c : s) {
          if (!is_digit(c)) return false;
        }
        return true;
      };
      if (!numeric(low) || !numeric(high))
        return fail("a range must be N or N-M in decimal digits");
      unsigned long long lo = std::stoull(std::string(low));
      unsigned long long hi = std::stoull(std::string(high));
      if (lo > hi) return fail("range " + std::string(range) + " runs backwards");
      if (hi - lo + 1 > max_hosts || choices.size() + (hi - lo + 1) > max_hosts) {
        return fail("more than " + std::to_string(max_hosts) + " hosts");
      }
      for (unsigned long long v = lo; v <= hi; ++v) choices.push_back(padded(v, low.size()));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return choices;
  }

  Result<std::vector<Part>> entry_parts(std::string_view entry) const {
    std::vector<Part> parts;
    std::size_t i = 0;
    while (i < entry.size()) {
      if (entry[i] == '[') {
        std::size_t close = entry.find(']', i);
        if (close == std::string_view::npos) return fail("'[' without ']'");
        std::string_view body = entry.substr(i + 1, close - i - 1);
        if (body.find('[') != std::string_view::npos) return fail("nested '['");
        auto choices = range_choices(body);
        if (!choices) return choices.error();
        parts.push_back(std::move(*choices));
        i = close + 1;
      } else {
        std::size_t next = entry.find_first_of("[]", i);
        if (next != std::string_view::npos && entry[next] == ']') return fail("']' without '['");
        std::string_view literal =
            entry.substr(i, next == std::string_view::npos ? next : next - i);
        for (char c : literal) {
          if (c <= ' ' || c == 0x7f)
            return fail("a host name cannot hold spaces or control characters");
        }
        parts.push_back(Part{std::string(literal)});
        i = next == std::string_view::npos ? entry.size() : next;
      }
    }
    return parts;
  }

  Result<bool> expand_entry(std::string_view entry, std::vector<std::string>& out) const {
    if (entry.empty()) return fail("an empty entry");
    auto parts = entry_parts(entry);
    if (!parts) return parts.error();
    std::size_t count = 1;
    for (const Part& part : *parts) {
      count *= part.size();
      if (count + out.size() > max_hosts)
        return fail("more than " + std::to_string(max_hosts) + " hosts");
    }
    // Odometer over the parts, the last part turning fastest.
    std::vector<std::size_t> digit(parts->size(), 0);
    for (std::size_t n = 0; n < count; ++n) {
      std::string host;
      for (std::size_t p = 0; p < parts->size(); ++p) host += (*parts)[p][digit[p]];
      out.push_back(std::move(host));
      for (std::size_t p = parts->size(); p-- > 0;) {
        if (++digit[p] < (*parts)[p].size()) break;
        digit[p] = 0;
      }
    }
    return true;
  }
};

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view variable, std::string_view text,
                                                 std::size_t max_hosts) {
  Parser parser{variable, text, max_hosts};
  std::vector<std::string> hosts;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']') --depth;
    if (depth < 0) return parser.fail("']' without '['");
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      auto done = parser.expand_entry(text.substr(start, i - start), hosts);
      if (!done) return done.error();
      start = i + 1;
    }
  }
  if (depth != 0) return parser.fail("'[' without ']'");
  return hosts;
}

}  // namespace aml
