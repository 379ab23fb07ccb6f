#include "topology/tasks_per_node.hpp"

#include <string>

#include "topology/numbers.hpp"

namespace aml {

Result<std::vector<int>> expand_tasks_per_node(std::string_view variable, std::string_view text) {
  auto bad = [&] {
    return invalid(std::string(variable), std::string(text),
                   "task counts per node such as 4(x2),3");
  };
  constexpr int kMaxNodes = 1 << 20;
  std::vector<int> counts;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    std::string_view count_text = item;
    int repeat = 1;
    if (std::size_t paren = item.find("(x"); paren != std::string_view::npos) {
      if (item.back() != ')') return bad();
      count_text = item.substr(0, paren);
      auto times =
          parse_number(variable, item.substr(paren + 2, item.size() - paren - 3), 1, kMaxNodes);
      if (!times) return bad();
      repeat = *times;
    }
    auto count = parse_number(variable, count_text, 1, kMaxCount);
    if (!count) return bad();
    if (counts.size() + repeat > static_cast<std::size_t>(kMaxNodes)) return bad();
    counts.insert(counts.end(), repeat, *count);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return counts;
}

}  // namespace aml
