#include "flight/collective_digest.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace aml {
namespace {

// Bounds on what crosses nodes: a dump's strings are not trusted to be short or printable.
constexpr std::size_t kMaxField = 64;

std::string clean(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= kMaxField) {
      out += "...";
      break;
    }
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

std::string text_of(const nlohmann::json& j) {
  if (j.is_string()) return clean(j.get<std::string>());
  if (j.is_null()) return "";
  return clean(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::int64_t int_of(const nlohmann::json& j, std::int64_t otherwise) {
  return j.is_number_integer() ? j.get<std::int64_t>() : otherwise;
}

// "[[4], [2, 3]]" from [[4], [2, 3]], as Python prints it (cut past kMaxField).
void add_sizes(const nlohmann::json& sizes, std::string& out, int depth) {
  if (out.size() > kMaxField) return;
  if (!sizes.is_array() || depth > 4) {
    out += text_of(sizes);
    return;
  }
  out += "[";
  for (std::size_t i = 0; i < sizes.size() && out.size() <= kMaxField; ++i) {
    if (i) out += ", ";
    add_sizes(sizes[i], out, depth + 1);
  }
  out += "]";
}
std::string sizes_text(const nlohmann::json& sizes) {
  std::string out;
  add_sizes(sizes, out, 0);
  return out.size() > kMaxField ? out.substr(0, kMaxField) + "..." : out;
}
// "Float" from ["Float"], "Float, Long" from two.
std::string dtypes_text(const nlohmann::json& dtypes) {
  if (!dtypes.is_array()) return text_of(dtypes);
  std::string out;
  for (const auto& d : dtypes) out += (out.empty() ? "" : ", ") + text_of(d);
  return clean(out);
}

// "nccl:all_reduce" -> "all_reduce"
std::string op_of(const nlohmann::json& entry) {
  std::string name = text_of(entry.value("profiling_name", nlohmann::json()));
  if (auto colon = name.find(':'); colon != std::string::npos) name = name.substr(colon + 1);
  return name;
}

// "send 1->0" (1 sends to 0), "recv 0<-1" (0 receives from 1): NCCL's names of p2p calls.
std::optional<P2PCall> p2p_of(const nlohmann::json& entry) {
  const std::string name = op_of(entry);
  const auto space = name.find(' ');
  if (space == std::string::npos) return std::nullopt;
  P2PCall call;
  call.op = name.substr(0, space);
  const std::string pair = name.substr(space + 1);
  auto arrow = pair.find(call.op == "recv" ? "<-" : "->");
  if (arrow == std::string::npos) return std::nullopt;
  const auto number = [](std::string_view text, int& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out >= 0;
  };
  if (!number(std::string_view(pair).substr(0, arrow), call.self) ||
      !number(std::string_view(pair).substr(arrow + 2), call.peer))
    return std::nullopt;
  return call;
}

// FNV-1a of the call's op, sizes and dtypes, folded to 16 bits: short on the wire.
std::uint32_t mark_of(const CollectiveCall& call) {
  std::uint32_t h = 2166136261u;
  for (const std::string* part : {&call.op, &call.sizes, &call.dtypes}) {
    for (unsigned char c : *part + "|") h = (h ^ c) * 16777619u;
  }
  return (h >> 16) ^ (h & 0xffff);
}

// The group's completed calls enqueued by the cut-off, the newest `count`, oldest first.
void keep_recent(std::vector<TimedCall>& calls, std::int64_t completed, const RecentCalls& want) {
  std::erase_if(calls, [&](const TimedCall& c) {
    return c.seq > completed || c.created_ns > want.enqueued_by_ns ||
           c.created_ns <= want.enqueued_after_ns;
  });
  std::sort(calls.begin(), calls.end(),
            [](const TimedCall& a, const TimedCall& b) { return a.seq < b.seq; });
  if (calls.size() > want.count) calls.erase(calls.begin(), calls.end() - want.count);
}

Result<std::vector<GroupDigest>> digest_of(const nlohmann::json& dump, std::size_t max_groups,
                                           const RecentCalls& recent) {
  auto fail = [](std::string why) {
    return invalid("flight recorder dump", "a pickle", std::move(why));
  };
  if (!dump.is_object()) return fail("a dict at its top");
  const auto entries = dump.find("entries");
  if (entries == dump.end() || !entries->is_array()) return fail("an 'entries' list");
  struct Seen {
    GroupDigest digest;
    std::size_t last_index = 0;  // where its newest entry is: the newest groups are kept
    std::int64_t pg_id = -1;
    std::int64_t completed_by_state = -1;  // where torch keeps no status: its entries' states
  };
  std::map<std::string, Seen> groups;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& e = (*entries)[i];
    if (!e.is_object()) return fail("each entry a dict; entry " + std::to_string(i) + " is not");
    const auto pg = e.value("process_group", nlohmann::json());
    if (!pg.is_array() || pg.empty()) return fail("entry " + std::to_string(i) + "'s group");
    const std::string id = text_of(pg[0]);
    Seen& seen = groups[id];
    seen.digest.id = id;
    if (pg.size() > 1) seen.digest.desc = text_of(pg[1]);
    if (seen.digest.desc == "undefined") seen.digest.desc.clear();
    seen.pg_id = int_of(e.value("pg_id", nlohmann::json()), seen.pg_id);
    seen.last_index = i;
    if (e.value("is_p2p", false)) {
      // p2p has its own numbering; what is kept of it is the oldest call still open.
      if (e.value("state", "") == "completed") continue;
      auto call = p2p_of(e);
      const std::int64_t seq = int_of(e.value("p2p_seq_id", nlohmann::json()), -1);
      if (!call || (seen.digest.p2p_open && seen.digest.p2p_open->seq <= seq)) continue;
      call->seq = seq;
      call->sizes = sizes_text(e.value("input_sizes", nlohmann::json()));
      call->created_ns = int_of(e.value("time_created_ns", nlohmann::json()), 0);
      seen.digest.p2p_open = std::move(call);
      continue;
    }
    const std::int64_t seq = int_of(e.value("collective_seq_id", nlohmann::json()), -1);
    if (e.value("state", "") == "completed") {
      seen.completed_by_state = std::max(seen.completed_by_state, seq);
    }
    if (seq < seen.digest.enqueued.seq && recent.count == 0) continue;  // older entries
    CollectiveCall call;
    call.seq = seq;
    call.op = op_of(e);
    call.sizes = sizes_text(e.value("input_sizes", nlohmann::json()));
    call.dtypes = dtypes_text(e.value("input_dtypes", nlohmann::json()));
    call.created_ns = int_of(e.value("time_created_ns", nlohmann::json()), 0);
    if (recent.count > 0) seen.digest.recent.push_back({seq, call.created_ns, mark_of(call)});
    if (seq >= seen.digest.enqueued.seq) seen.digest.enqueued = std::move(call);
  }
  // What completed: the group's status where torch keeps one (by pg_id), else its entries'.
  const auto status = dump.find("pg_status");
  for (auto& [id, seen] : groups) {
    seen.digest.completed = seen.completed_by_state;
    if (status != dump.end() && status->is_object()) {
      auto s = status->find(std::to_string(seen.pg_id));
      if (s != status->end() && s->is_object())
        seen.digest.completed = int_of(s->value("last_completed_collective", nlohmann::json()), -1);
    }
    keep_recent(seen.digest.recent, seen.digest.completed, recent);
  }
  std::vector<Seen> kept;
  for (auto& [id, seen] : groups) kept.push_back(std::move(seen));
  std::sort(kept.begin(), kept.end(),
            [](const Seen& a, const Seen& b) { return a.last_index > b.last_index; });
  if (kept.size() > max_groups) kept.resize(max_groups);
  std::vector<GroupDigest> out;
  for (Seen& s : kept) out.push_back(std::move(s.digest));
  std::sort(out.begin(), out.end(),
            [](const GroupDigest& a, const GroupDigest& b) { return a.id < b.id; });
  return out;
}

}  // namespace

Result<std::vector<GroupDigest>> digest_flight_dump(const nlohmann::json& dump,
                                                    std::size_t max_groups,
                                                    const RecentCalls& recent) {
  try {
    return digest_of(dump, max_groups, recent);
  } catch (const nlohmann::json::exception& e) {
    // A field of another type than torch writes ("is_p2p": 3): the dump is not trusted.
    return invalid("flight recorder dump", "a pickle",
                   std::string("fields of the types torch writes: ") + e.what());
  }
}

namespace {

const char* status_name(RankCollectives::Status s) {
  switch (s) {
    case RankCollectives::Status::no_recorder:
      return "no_recorder";
    case RankCollectives::Status::no_dump:
      return "no_dump";
    case RankCollectives::Status::unreadable:
      return "unreadable";
    case RankCollectives::Status::read:
      return "read";
    default:
      return "not_asked";
  }
}

}  // namespace

nlohmann::json collectives_json(const RankCollectives& c) {
  nlohmann::json j = {{"status", status_name(c.status)}};
  if (!c.why.empty()) j["why"] = c.why.substr(0, 200);
  if (c.status != RankCollectives::Status::read) return j;
  auto& groups = j["groups"] = nlohmann::json::array();
  for (const GroupDigest& g : c.groups) {
    groups.push_back({{"id", g.id},
                      {"desc", g.desc},
                      {"seq", g.enqueued.seq},
                      {"op", g.enqueued.op},
                      {"sizes", g.enqueued.sizes},
                      {"dtypes", g.enqueued.dtypes},
                      {"created_ns", g.enqueued.created_ns},
                      {"completed", g.completed}});
    if (const auto& p = g.p2p_open) {
      groups.back()["p2p"] = {{"seq", p->seq},     {"op", p->op},
                              {"self", p->self},   {"peer", p->peer},
                              {"sizes", p->sizes}, {"created_ns", p->created_ns}};
    }
  }
  return j;
}

RankCollectives collectives_from_json(const nlohmann::json& j) {
  RankCollectives c;
  if (!j.is_object()) return c;
  const auto said = j.find("status");
  const std::string status = said != j.end() && said->is_string() ? said->get<std::string>() : "";
  c.status = status == "read"          ? RankCollectives::Status::read
             : status == "no_recorder" ? RankCollectives::Status::no_recorder
             : status == "no_dump"     ? RankCollectives::Status::no_dump
             : status == "unreadable"  ? RankCollectives::Status::unreadable
                                       : RankCollectives::Status::not_asked;
  if (j.contains("why") && j["why"].is_string()) c.why = j["why"].get<std::string>();
  const auto groups = j.find("groups");
  if (groups == j.end() || !groups->is_array()) return c;
  for (const auto& g : *groups) {
    if (!g.is_object()) continue;
    GroupDigest d;
    d.id = text_of(g.value("id", nlohmann::json()));
    d.desc = text_of(g.value("desc", nlohmann::json()));
    d.enqueued.seq = int_of(g.value("seq", nlohmann::json()), -1);
    d.enqueued.op = text_of(g.value("op", nlohmann::json()));
    d.enqueued.sizes = text_of(g.value("sizes", nlohmann::json()));
    d.enqueued.dtypes = text_of(g.value("dtypes", nlohmann::json()));
    d.enqueued.created_ns = int_of(g.value("created_ns", nlohmann::json()), 0);
    d.completed = int_of(g.value("completed", nlohmann::json()), -1);
    if (const auto p = g.value("p2p", nlohmann::json()); p.is_object()) {
      P2PCall call;
      call.seq = int_of(p.value("seq", nlohmann::json()), -1);
      call.op = text_of(p.value("op", nlohmann::json()));
      const auto rank_of = [&](const char* key) {
        const std::int64_t n = int_of(p.value(key, nlohmann::json()), -1);
        return n >= 0 && n <= INT32_MAX ? static_cast<int>(n) : -1;
      };
      call.self = rank_of("self");
      call.peer = rank_of("peer");
      call.sizes = text_of(p.value("sizes", nlohmann::json()));
      call.created_ns = int_of(p.value("created_ns", nlohmann::json()), 0);
      d.p2p_open = std::move(call);
    }
    c.groups.push_back(std::move(d));
  }
  return c;
}

std::string group_text(const GroupDigest& group) {
  return group.desc.empty() ? "process group " + group.id : group.desc;
}

std::string call_text(const CollectiveCall& call, const GroupDigest& group) {
  return (call.op.empty() ? std::string("a collective") : call.op) + " #" +
         std::to_string(call.seq) + " of " + group_text(group);
}

}  // namespace aml
