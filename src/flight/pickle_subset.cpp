#include "flight/pickle_subset.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "flight/pickle_opcodes.hpp"

namespace aml {
namespace {

// A value as the pickle builds it: containers are shared, as Python's objects are (a memoized
// dict filled after it was memoized is the same dict wherever it is fetched).
struct Node;
using NodePtr = std::shared_ptr<Node>;
struct Node {
  enum class Kind { none, boolean, integer, real, text, list, tuple, dict } kind = Kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<NodePtr> items;                      // list, tuple
  std::vector<std::pair<NodePtr, NodePtr>> pairs;  // dict, in order
};

class Reader {
 public:
  Reader(std::string_view bytes, const PickleLimits& limits) : in_(bytes), limits_(limits) {}
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  // A container that holds itself (a memo GET inside it) would keep itself alive: every
  // node's references are dropped here, cycles or not.
  ~Reader() {
    for (const NodePtr& node : made_) {
      node->items.clear();
      node->pairs.clear();
    }
  }

  Result<nlohmann::json> run() {
    if (in_.size() > limits_.max_bytes) {
      return fail("a dump of " + std::to_string(in_.size()) + " bytes: more than the " +
                  std::to_string(limits_.max_bytes) + " bytes a dump is read up to");
    }
    while (error_.empty()) {
      if (at_ >= in_.size()) return fail("it ends before its STOP opcode");
      const std::size_t op_at = at_;
      const auto op = static_cast<unsigned char>(in_[at_++]);
      if (op == '.') break;
      if (!step(op, op_at) && error_.empty()) {
        fail("opcode " + opcode_text(op) + " at byte " + std::to_string(op_at) +
             ": not in the subset a flight recorder dump uses (data only)");
      }
    }
    if (!error_.empty()) return invalid("flight recorder dump", "a pickle", error_);
    if (stack_.size() != 1 || !marks_.empty()) {
      return invalid("flight recorder dump", "a pickle",
                     "one value at its STOP; it left " + std::to_string(stack_.size()));
    }
    nlohmann::json out;
    std::size_t made = 0;
    if (!to_json(*stack_.back(), out, 0, made)) {
      return invalid("flight recorder dump", "a pickle", error_);
    }
    return out;
  }

 private:
  NodePtr make(Node::Kind kind) {
    auto node = std::make_shared<Node>();
    node->kind = kind;
    made_.push_back(node);
    return node;
  }
  Result<nlohmann::json> fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return invalid("flight recorder dump", "a pickle", error_);
  }
  bool failed(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return true;  // handled (as an error)
  }

  bool take(std::size_t n, std::string_view& out) {
    if (in_.size() - at_ < n) return false;
    out = in_.substr(at_, n);
    at_ += n;
    return true;
  }
  // Little-endian unsigned of n bytes.
  bool unsigned_le(std::size_t n, std::uint64_t& out) {
    std::string_view raw;
    if (!take(n, raw)) return false;
    out = 0;
    for (std::size_t i = 0; i < n; ++i) {
      out |= static_cast<std::uint64_t>(static_cast<unsigned char>(raw[i])) << (8 * i);
    }
    return true;
  }

  bool push(NodePtr node) {
    if (++values_ > limits_.max_values) return failed("more values than a dump is read up to");
    stack_.push_back(std::move(node));
    return true;
  }
  bool push_int(std::int64_t v) {
    auto node = make(Node::Kind::integer);
    node->integer = v;
    return push(std::move(node));
  }
  bool push_text(std::size_t length_bytes) {
    std::uint64_t n = 0;
    std::string_view raw;
    if (!unsigned_le(length_bytes, n) || n > in_.size() - at_ || !take(n, raw)) {
      return failed("a string runs past the end at byte " + std::to_string(at_));
    }
    auto node = make(Node::Kind::text);
    node->text.assign(raw);
    return push(std::move(node));
  }
  NodePtr pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
      failed("an opcode at byte " + std::to_string(at_ - 1) + " takes from an empty stack");
      return nullptr;
    }
    NodePtr top = std::move(stack_.back());
    stack_.pop_back();
    return top;
  }
  // The values above the newest mark, which is dropped.
  bool pop_mark(std::vector<NodePtr>& out) {
    if (marks_.empty()) return !failed("no MARK before byte " + std::to_string(at_ - 1));
    const std::size_t from = marks_.back();
    marks_.pop_back();
    out.assign(std::make_move_iterator(stack_.begin() + static_cast<long>(from)),
               std::make_move_iterator(stack_.end()));
    stack_.resize(from);
    return true;
  }
  NodePtr top_of_kind(std::initializer_list<Node::Kind> kinds) {
    if (stack_.empty()) return nullptr;
    for (Node::Kind k : kinds) {
      if (stack_.back()->kind == k) return stack_.back();
    }
    return nullptr;
  }
  bool set_items(std::vector<NodePtr> items) {
    NodePtr dict = top_of_kind({Node::Kind::dict});
    if (!dict || items.size() % 2 != 0) {
      return failed("SETITEMS at byte " + std::to_string(at_ - 1) + " without a dict and pairs");
    }
    for (std::size_t i = 0; i < items.size(); i += 2) {
      dict->pairs.emplace_back(std::move(items[i]), std::move(items[i + 1]));
    }
    return true;
  }
  bool append(std::vector<NodePtr> items) {
    NodePtr list = top_of_kind({Node::Kind::list});
    if (!list) return failed("APPENDS at byte " + std::to_string(at_ - 1) + " without a list");
    for (NodePtr& item : items) list->items.push_back(std::move(item));
    return true;
  }
  bool tuple_of(std::size_t n) {
    if (stack_.size() < n + (marks_.empty() ? 0 : marks_.back())) {
      return failed("a TUPLE at byte " + std::to_string(at_ - 1) + " takes from an empty stack");
    }
    auto tuple = make(Node::Kind::tuple);
    tuple->items.assign(stack_.end() - static_cast<long>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return push(std::move(tuple));
  }
  bool memo_put(std::uint64_t index) {
    if (stack_.empty()) return failed("a memo PUT with nothing to keep");
    if (memo_.size() >= limits_.max_values) return failed("more memo entries than allowed");
    memo_[index] = stack_.back();
    return true;
  }
  bool memo_get(std::uint64_t index) {
    auto found = memo_.find(index);
    if (found == memo_.end()) {
      return failed("a memo GET of entry " + std::to_string(index) + ", never PUT");
    }
    return push(found->second);
  }

  // One opcode; false: not in the subset.
  bool step(unsigned char op, std::size_t op_at) {
    std::uint64_t n = 0;
    std::string_view raw;
    const std::string where = " at byte " + std::to_string(op_at);
    switch (op) {
      case 0x80:  // PROTO
        return take(1, raw) || failed("PROTO cut short" + where);
      case 0x95:  // FRAME: a length only
        return take(8, raw) || failed("FRAME cut short" + where);
      case '(':
        marks_.push_back(stack_.size());
        return true;
      case '0':
        return pop() != nullptr || true;
      case '1': {
        std::vector<NodePtr> dropped;
        return pop_mark(dropped) || true;
      }
      case '2':
        if (stack_.empty()) return failed("DUP of nothing" + where);
        return push(stack_.back());
      case 'N':
        return push(make(Node::Kind::none));
      case 0x88:
      case 0x89: {
        auto node = make(Node::Kind::boolean);
        node->boolean = op == 0x88;
        return push(std::move(node));
      }
      case 'J':
        if (!unsigned_le(4, n)) return failed("BININT cut short" + where);
        return push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(n)));
      case 'K':
        if (!unsigned_le(1, n)) return failed("BININT1 cut short" + where);
        return push_int(static_cast<std::int64_t>(n));
      case 'M':
        if (!unsigned_le(2, n)) return failed("BININT2 cut short" + where);
        return push_int(static_cast<std::int64_t>(n));
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        if (!unsigned_le(op == 0x8a ? 1 : 4, n)) return failed("LONG cut short" + where);
        if (n > 8) return failed("an integer of " + std::to_string(n) + " bytes" + where);
        std::uint64_t v = 0;
        if (n > 0 && !unsigned_le(n, v)) return failed("LONG cut short" + where);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);  // sign
        return push_int(static_cast<std::int64_t>(v));
      }
      case 'G': {  // BINFLOAT: big-endian
        if (!take(8, raw)) return failed("BINFLOAT cut short" + where);
        std::uint64_t bits = 0;
        for (char c : raw) bits = (bits << 8) | static_cast<unsigned char>(c);
        auto node = make(Node::Kind::real);
        node->real = std::bit_cast<double>(bits);
        return push(std::move(node));
      }
      case 'X':  // BINUNICODE
      case 'T':  // BINSTRING
      case 'B':  // BINBYTES
        return push_text(4);
      case 0x8c:  // SHORT_BINUNICODE
      case 'U':   // SHORT_BINSTRING
      case 'C':   // SHORT_BINBYTES
        return push_text(1);
      case 0x8d:  // BINUNICODE8
      case 0x8e:  // BINBYTES8
        return push_text(8);
      case '}':
        return push(make(Node::Kind::dict));
      case ']':
        return push(make(Node::Kind::list));
      case ')':
        return push(make(Node::Kind::tuple));
      case 'd':
      case 'l':
      case 't': {
        std::vector<NodePtr> items;
        if (!pop_mark(items)) return true;
        const auto kind = op == 'd'   ? Node::Kind::dict
                          : op == 'l' ? Node::Kind::list
                                      : Node::Kind::tuple;
        auto node = make(kind);
        if (!push(node)) return true;
        return op == 'd' ? set_items(std::move(items)) : (node->items = std::move(items), true);
      }
      case 0x85:
        return tuple_of(1);
      case 0x86:
        return tuple_of(2);
      case 0x87:
        return tuple_of(3);
      case 's': {
        NodePtr value = pop();
        NodePtr key = value ? pop() : nullptr;
        return !key || set_items({std::move(key), std::move(value)});
      }
      case 'u': {
        std::vector<NodePtr> items;
        return !pop_mark(items) || set_items(std::move(items));
      }
      case 'a': {
        NodePtr item = pop();
        return !item || append({std::move(item)});
      }
      case 'e': {
        std::vector<NodePtr> items;
        return !pop_mark(items) || append(std::move(items));
      }
      case 'q':
        return unsigned_le(1, n) ? memo_put(n) : failed("BINPUT cut short" + where);
      case 'r':
        return unsigned_le(4, n) ? memo_put(n) : failed("LONG_BINPUT cut short" + where);
      case 0x94:  // MEMOIZE
        return memo_put(memo_.size());
      case 'h':
        return unsigned_le(1, n) ? memo_get(n) : failed("BINGET cut short" + where);
      case 'j':
        return unsigned_le(4, n) ? memo_get(n) : failed("LONG_BINGET cut short" + where);
      default:
        return false;
    }
  }

  static std::string key_text(const Node& key) {
    switch (key.kind) {
      case Node::Kind::text:
        return key.text;
      case Node::Kind::integer:
        return std::to_string(key.integer);
      case Node::Kind::boolean:
        return key.boolean ? "True" : "False";
      case Node::Kind::none:
        return "None";
      default:
        return "?";
    }
  }

  // Shared values are written out once per place they are in: bounded by max_values (a
  // dump that shares a list with itself, or doubles at each level, is named, not expanded).
  bool to_json(const Node& node, nlohmann::json& out, std::size_t depth, std::size_t& made) {
    if (++made > limits_.max_values) return !failed("more values than a dump is read up to");
    if (depth > limits_.max_depth) {
      return !failed("values nested deeper than " + std::to_string(limits_.max_depth));
    }
    switch (node.kind) {
      case Node::Kind::none:
        out = nullptr;
        return true;
      case Node::Kind::boolean:
        out = node.boolean;
        return true;
      case Node::Kind::integer:
        out = node.integer;
        return true;
      case Node::Kind::real:
        out = node.real;
        return true;
      case Node::Kind::text:
        // Not UTF-8 (bytes): kept as the text it is, shown with replacement when dumped.
        out = node.text;
        return true;
      case Node::Kind::list:
      case Node::Kind::tuple:
        out = nlohmann::json::array();
        for (const NodePtr& item : node.items) {
          out.push_back(nullptr);
          if (!to_json(*item, out.back(), depth + 1, made)) return false;
        }
        return true;
      case Node::Kind::dict:
        out = nlohmann::json::object();
        for (const auto& [key, value] : node.pairs) {
          if (!to_json(*value, out[key_text(*key)], depth + 1, made)) return false;
        }
        return true;
    }
    return true;
  }

  std::string_view in_;
  PickleLimits limits_;
  std::size_t at_ = 0;
  std::size_t values_ = 0;
  std::vector<NodePtr> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, NodePtr> memo_;
  std::string error_;
  std::vector<NodePtr> made_;  // every node, for the destructor
};

}  // namespace

Result<nlohmann::json> read_pickle_subset(std::string_view bytes, const PickleLimits& limits) {
  return Reader(bytes, limits).run();
}

}  // namespace aml
