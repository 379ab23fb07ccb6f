// The store core's blocked waits: a registry by key that a new key wakes, and a deadline queue
// for their timeouts. A wait that ends leaves nothing behind.
#include <algorithm>

#include "store/core/store_core.hpp"
#include "store/core/wait_grid.hpp"

namespace aml::store {

namespace {

constexpr std::uint32_t kForever = 0xffffffffu;
StoreClock::time_point wait_deadline(std::chrono::milliseconds timeout) {
  const StoreClock::time_point exact = StoreClock::now() + timeout;
  if (timeout < kWaitGridFrom) return exact;
  const auto grid = std::chrono::duration_cast<StoreClock::duration>(kWaitGrid);
  const auto since = exact.time_since_epoch();
  return StoreClock::time_point((since + grid - StoreClock::duration(1)) / grid * grid);
}

}  // namespace

std::size_t StoreCore::pending_wait_entries() const {
  std::size_t entries = deadlines_.size();
  for (const auto& [key, waiting] : waiters_) entries += waiting.size();
  return entries;
}

bool StoreCore::present(const std::string& key) const {
  if (data_.count(key)) return true;
  auto queue = queues_.find(key);
  return queue != queues_.end() && !queue->second.empty();
}

bool StoreCore::all_present(const std::vector<std::string>& keys) const {
  return std::all_of(keys.begin(), keys.end(), [this](const auto& k) { return present(k); });
}

// c waits on for each of its keys that is not there, once however often the key is named.
void StoreCore::register_missing(Connection& c) {
  c.wait_missing = 0;
  for (const std::string& k : c.wait_keys) {
    if (present(k)) continue;
    auto [entry, added] = waiters_[k].try_emplace(c.id, c.wait_seq);
    if (!added && entry->second == c.wait_seq) continue;  // named twice in this wait
    entry->second = c.wait_seq;                           // a finished wait's entry reused
    ++c.wait_missing;
  }
}

void StoreCore::start_wait(Connection& c, const std::vector<std::string>& keys,
                           std::uint32_t timeout_ms) {
  c.waiting = true;
  ++c.wait_seq;
  c.wait_keys = keys;
  register_missing(c);
  if (timeout_ms != kForever) {
    c.deadline = deadlines_.emplace(wait_deadline(std::chrono::milliseconds(timeout_ms)),
                                    std::make_pair(c.id, c.wait_seq));
  }
}

void StoreCore::forget_wait(Connection& c) {
  // A client polling with short timeouts on a key that never comes must not grow the registry
  // or the deadline queue.
  for (const std::string& k : c.wait_keys) {
    auto it = waiters_.find(k);
    if (it == waiters_.end()) continue;
    auto entry = it->second.find(c.id);
    if (entry != it->second.end() && entry->second == c.wait_seq) it->second.erase(entry);
    if (it->second.empty()) waiters_.erase(it);
  }
  if (c.deadline) deadlines_.erase(*c.deadline);
  c.deadline.reset();
}

void StoreCore::cancel_wait(Connection& c) {
  if (c.waiting) forget_wait(c);
  c.waiting = false;
  c.wait_keys.clear();
}

void StoreCore::finish_wait(Connection& c, bool timed_out) {
  forget_wait(c);
  c.waiting = false;
  c.answered_at = Clock::now();
  std::string frame = door_->wait_reply(c, timed_out);
  c.wait_keys.clear();
  const std::uint64_t id = c.id;
  reply(c, frame);
  if (exists(id)) door_->wait_over(c);
}

void StoreCore::wake_waiters(const std::string& key, bool just_one) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  auto waiting = std::move(it->second);
  waiters_.erase(it);
  for (auto entry = waiting.begin(); entry != waiting.end(); ++entry) {
    Connection* c = find(entry->first);
    if (!c || !c->waiting || c->wait_seq != entry->second) continue;
    if (c->wait_missing > 0 && --c->wait_missing > 0) continue;
    // Every key it waited for came; one that was erased meanwhile is waited for again.
    if (!all_present(c->wait_keys)) {
      register_missing(*c);
      continue;
    }
    finish_wait(*c, false);
    if (just_one) {
      // The others wait on for the queue's next entry.
      for (auto rest = std::next(entry); rest != waiting.end(); ++rest) {
        waiters_[key].insert(*rest);
      }
      return;
    }
  }
}

void StoreCore::expire_deadlines() {
  const auto now = Clock::now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    auto [id, seq] = deadlines_.begin()->second;
    Connection* c = find(id);
    if (!c || !c->waiting || c->wait_seq != seq) {
      deadlines_.erase(deadlines_.begin());
      continue;
    }
    finish_wait(*c, true);  // erases its deadline entry
  }
}

}  // namespace aml::store
