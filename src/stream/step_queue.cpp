// The queue state machine of one stream; see step_queue.hpp.
#include "stream/step_queue.hpp"

#include <algorithm>

namespace slipstream::stream {
namespace {

std::string step_text(std::int64_t step) { return "step " + std::to_string(step); }

const char* policy_text(QueuePolicy policy) {
  return policy == QueuePolicy::kBlock ? "block" : "discard";
}

}  // namespace

const char* distribution_name(StepDistribution distribution) noexcept {
  switch (distribution) {
    case StepDistribution::kAll:
      return "all";
    case StepDistribution::kRoundRobin:
      return "round_robin";
    case StepDistribution::kOnDemand:
      return "on_demand";
  }
  return "all";
}

StepQueue::StepQueue(StreamConfig config) : config_(config) {
  if (config_.writers == 0) throw QueueError("a stream needs at least 1 writer");
  if (config_.queue_limit == 0) throw QueueError("the queue limit must be at least 1 step");
}

// ---- Writers -------------------------------------------------------------------------------------

void StepQueue::check_writer(std::uint32_t rank, const char* what) const {
  if (rank >= config_.writers) {
    throw QueueError(std::string(what) + ": writer rank " + std::to_string(rank) +
                     " is out of range (the stream has " + std::to_string(config_.writers) +
                     " writers, ranks 0.." + std::to_string(config_.writers - 1) + ")");
  }
  if (failed_.count(rank)) {
    throw QueueError(std::string(what) + ": writer " + std::to_string(rank) +
                     " has failed (its steps were aborted)");
  }
  if (closed_.count(rank)) {
    throw QueueError(std::string(what) + ": writer " + std::to_string(rank) +
                     " has closed the stream");
  }
}

std::uint32_t StepQueue::live_writers() const noexcept {
  return config_.writers - static_cast<std::uint32_t>(closed_.size() + failed_.size());
}

StepQueue::Step* StepQueue::find_step(std::int64_t step) {
  auto it = steps_.find(step);
  return it == steps_.end() ? nullptr : &it->second;
}

const StepQueue::Step* StepQueue::find_step(std::int64_t step) const {
  auto it = steps_.find(step);
  return it == steps_.end() ? nullptr : &it->second;
}

void StepQueue::check_begin(std::uint32_t rank, std::int64_t step) const {
  check_writer(rank, "begin step");
  if (ended_) throw QueueError("begin step: the stream has ended");
  if (step < 0) throw QueueError("begin step: step numbers start at 0, got " + std::to_string(step));
  if (auto open = std::find_if(steps_.begin(), steps_.end(),
                               [&](const auto& entry) {
                                 return entry.second.begun.count(rank) &&
                                        !entry.second.ended.count(rank);
                               });
      open != steps_.end()) {
    throw QueueError("begin step: writer " + std::to_string(rank) + " has not ended " +
                     step_text(open->first) + " (end it before beginning " + step_text(step) + ")");
  }
  if (auto last = last_begun_.find(rank); last != last_begun_.end() && step <= last->second) {
    throw QueueError("begin step: writer " + std::to_string(rank) + " already began " +
                     step_text(last->second) + "; step numbers must increase, got " +
                     std::to_string(step));
  }
  if (find_step(step) == nullptr && step <= newest_begun_) {
    throw QueueError("begin step: " + step_text(step) +
                     " is no longer open (it completed and was released, or was aborted); the "
                     "newest step begun is " + std::to_string(newest_begun_));
  }
}

StepQueue::Step& StepQueue::create(std::uint32_t rank, std::int64_t step,
                                   std::vector<std::string>* discarded) {
  Step& created = steps_[step];
  created.number = step;
  created.begun.insert(rank);
  last_begun_[rank] = step;
  newest_begun_ = step;
  for (auto& [name, group] : groups_) {
    // A discard group that is behind skips the newest step; every other group is entitled.
    if (group.config.policy == QueuePolicy::kDiscard && behind(group, name)) {
      ++group.stats.discarded;
      if (discarded) discarded->push_back(name);
      continue;
    }
    created.holds.emplace(name, GroupHold{});
  }
  return created;
}

bool StepQueue::begin(std::uint32_t rank, std::int64_t step) {
  if (auto reserved = reservations_.find(rank); reserved != reservations_.end()) {
    if (reserved->second.step == step) {  // a plain begin of what it reserved: a use of it
      confirm(rank, step);
      return true;
    }
    // The guess was wrong. The writers agree on step numbers, so the others' reservations of
    // the guessed step are wrong too: all go, so that none holds a slot this begin may need.
    const std::int64_t guessed = reserved->second.step;
    std::vector<std::uint32_t> reservers;
    for (const auto& [writer, r] : reservations_) {
      if (r.step == guessed) reservers.push_back(writer);
    }
    for (std::uint32_t writer : reservers) withdraw(writer, guessed);
  }
  check_begin(rank, step);
  if (Step* held = find_step(step)) {  // another writer reserved it
    held->begun.insert(rank);
    held->tentative = false;
    last_begun_[rank] = step;
    return true;
  }
  if (slots_taken() >= config_.queue_limit && !free_a_slot()) return false;
  create(rank, step, nullptr);
  return true;
}

bool StepQueue::reserve(std::uint32_t rank, std::int64_t step) {
  if (reservations_.count(rank)) return false;
  try {
    check_begin(rank, step);
  } catch (const QueueError&) {
    return false;
  }
  Reservation reservation{step, std::nullopt};
  if (auto last = last_begun_.find(rank); last != last_begun_.end()) {
    reservation.last_begun = last->second;
  }
  if (Step* held = find_step(step)) {
    held->begun.insert(rank);
    last_begun_[rank] = step;
  } else {
    if (slots_taken() >= config_.queue_limit) return false;  // no waiting, no making room
    const std::int64_t newest_before = newest_begun_;
    Step& created = create(rank, step, nullptr);
    created.tentative = true;
    created.newest_before = newest_before;
    for (const auto& [name, group] : groups_) {
      if (!created.holds.count(name)) created.discarded_for.push_back(name);
    }
  }
  reservations_[rank] = reservation;
  return true;
}

void StepQueue::confirm(std::uint32_t rank, std::int64_t step) {
  auto reserved = reservations_.find(rank);
  if (reserved == reservations_.end() || reserved->second.step != step) return;
  reservations_.erase(reserved);
  if (Step* held = find_step(step)) held->tentative = false;
}

void StepQueue::withdraw(std::uint32_t rank, std::int64_t step) {
  auto reserved = reservations_.find(rank);
  if (reserved == reservations_.end() || reserved->second.step != step) {
    throw QueueError("withdraw: writer " + std::to_string(rank) + " holds no reservation of " +
                     step_text(step));
  }
  const Reservation reservation = reserved->second;
  reservations_.erase(reserved);
  if (reservation.last_begun) {
    last_begun_[rank] = *reservation.last_begun;
  } else {
    last_begun_.erase(rank);
  }
  Step* held = find_step(step);
  if (held == nullptr) return;  // aborted meanwhile
  held->begun.erase(rank);
  if (!held->tentative || !held->begun.empty() || !held->ended.empty()) return;
  for (const std::string& name : held->discarded_for) {
    if (auto group = groups_.find(name); group != groups_.end() && group->second.stats.discarded > 0) {
      --group->second.stats.discarded;
    }
  }
  if (newest_begun_ == step) newest_begun_ = held->newest_before;
  steps_.erase(step);
  freed_.push_back(step);
}

std::optional<std::int64_t> StepQueue::reservation(std::uint32_t rank) const {
  auto reserved = reservations_.find(rank);
  if (reserved == reservations_.end()) return std::nullopt;
  return reserved->second.step;
}

bool StepQueue::end(std::uint32_t rank, std::int64_t step) {
  check_writer(rank, "end step");
  confirm(rank, step);
  Step* held = find_step(step);
  if (held == nullptr || !held->begun.count(rank)) {
    throw QueueError("end step: writer " + std::to_string(rank) + " has not begun " +
                     step_text(step) + (held == nullptr ? " (or it was aborted)" : ""));
  }
  if (held->ended.count(rank)) {
    throw QueueError("end step: writer " + std::to_string(rank) + " already ended " +
                     step_text(step));
  }
  held->ended.insert(rank);
  if (!all_live_writers_ended(*held)) return false;
  complete(step);
  return true;
}

bool StepQueue::all_live_writers_ended(const Step& step) const {
  std::uint32_t live_ended = 0;
  for (std::uint32_t rank : step.ended) {
    if (!closed_.count(rank) && !failed_.count(rank)) ++live_ended;
  }
  return live_ended == live_writers();
}

void StepQueue::complete(std::int64_t number) {
  Step& step = steps_.at(number);
  step.complete = true;
  step.ever_held = !step.holds.empty();
  if (config_.first_step_precious && !precious_) precious_ = number;
  ++counters_.steps_completed;
  counters_.newest_complete = std::max(counters_.newest_complete, number);
  settle(number);
}

void StepQueue::close_writer(std::uint32_t rank) {
  check_writer(rank, "close");
  if (auto reserved = reservation(rank)) withdraw(rank, *reserved);
  for (auto& [number, step] : steps_) {
    if (step.begun.count(rank) && !step.ended.count(rank)) {
      abort_held_step(number, "writer " + std::to_string(rank) + " closed the stream during " +
                                  step_text(number));
      break;  // a writer has at most one open step
    }
  }
  closed_.insert(rank);
  check_end();
}

void StepQueue::fail_writer(std::uint32_t rank, const std::string& reason) {
  check_writer(rank, "fail writer");
  // A reserved step counts as begun: a writer's begin of the step it reserved sends nothing, so
  // the server cannot tell whether it died before or inside that step, and a step completed
  // without it would reach the readers with a hole where its chunks belong.
  if (auto reserved = reservation(rank)) confirm(rank, *reserved);
  std::vector<std::int64_t> aborted;
  for (auto& [number, step] : steps_) {
    if (!step.complete && (step.begun.count(rank) || config_.end_on_writer_failure)) {
      aborted.push_back(number);
    }
  }
  for (std::int64_t number : aborted) abort_held_step(number, reason);
  failed_.insert(rank);
  if (config_.end_on_writer_failure) ended_ = true;
  check_end();
}

void StepQueue::abort_step(std::int64_t step, const std::string& reason) {
  const Step* held = find_step(step);
  if (held == nullptr) throw QueueError("abort: " + step_text(step) + " is not held");
  if (held->complete) throw QueueError("abort: " + step_text(step) + " is already complete");
  abort_held_step(step, reason);
}

void StepQueue::abort_held_step(std::int64_t step, const std::string& reason) {
  Step& held = steps_.at(step);
  for (const auto& [name, hold] : held.holds) {
    Group& group = groups_.at(name);
    group.notices.push_back(Notice{step, reason, {}});
    ++group.stats.aborted;
  }
  ++counters_.steps_aborted;
  free_step(step);
}

// When writers leave, the steps still open may now be complete (every survivor ended them) or may
// never complete (no writer left).
void StepQueue::check_end() {
  if (live_writers() == 0) ended_ = true;
  std::vector<std::int64_t> open;
  for (const auto& [number, step] : steps_) {
    if (!step.complete) open.push_back(number);
  }
  for (std::int64_t number : open) {
    if (live_writers() == 0) {
      abort_held_step(number, "no writer is left to end " + step_text(number));
    } else if (all_live_writers_ended(steps_.at(number))) {
      complete(number);
    }
  }
}

// ---- Slots ---------------------------------------------------------------------------------------

bool StepQueue::behind(const Group& group, const std::string& name) const {
  for (const auto& [number, step] : steps_) {
    auto hold = step.holds.find(name);
    if (step.complete && hold != step.holds.end() && hold->second.handed.empty() &&
        !group.members.empty()) {
      return true;
    }
  }
  return false;
}

bool StepQueue::kept_aside(const Step& step) const noexcept {
  return precious_ == step.number && step.holds.empty();
}

std::size_t StepQueue::slots_taken() const noexcept {
  if (!precious_) return steps_.size();
  const Step* precious = find_step(*precious_);
  return steps_.size() - (precious != nullptr && kept_aside(*precious) ? 1 : 0);
}

// Called when every slot is taken. In order of preference:
//   1. the oldest complete step that no group was ever entitled to is dropped (once the expected
//      groups have joined: until then it is kept for them);
//   2. the oldest complete step whose only holders are discard groups that have not started it
//      is taken from them (counted as discarded for each).
// A step some reader is reading, or that a blocking group has not released, is never freed here.
bool StepQueue::free_a_slot() {
  if (groups_.size() >= config_.expected_groups) {
    for (auto& [number, step] : steps_) {
      if (precious_ == number) continue;  // kept for the stream's life
      if (step.complete && !step.ever_held && step.holds.empty()) {
        ++counters_.steps_dropped_unread;
        free_step(number);
        return true;
      }
    }
  }
  for (auto& [number, step] : steps_) {
    if (!step.complete || step.holds.empty()) continue;
    const bool revocable = std::all_of(step.holds.begin(), step.holds.end(), [&](const auto& entry) {
      return groups_.at(entry.first).config.policy == QueuePolicy::kDiscard &&
             entry.second.handed.empty();
    });
    if (!revocable) continue;
    for (const auto& [name, hold] : step.holds) ++groups_.at(name).stats.discarded;
    if (precious_ == number) {
      step.holds.clear();  // taken from them, kept aside: its slot is free
    } else {
      free_step(number);
    }
    return true;
  }
  return false;
}

bool StepQueue::settle(std::int64_t number) {
  Step* step = find_step(number);
  if (step == nullptr || !step->complete) return false;
  for (auto it = step->holds.begin(); it != step->holds.end();) {
    const GroupHold& hold = it->second;
    const Group& group = groups_.at(it->first);
    const bool snapshot_taken = !hold.readers.empty();
    const bool done =
        snapshot_taken
            ? std::all_of(hold.readers.begin(), hold.readers.end(),
                          [&](std::uint32_t r) { return hold.released.count(r) > 0; })
            : group.members.empty();
    it = done ? step->holds.erase(it) : std::next(it);
  }
  // Until the expected groups have all joined, a step the groups so far are done with is kept
  // for the ones still to come (they start at the oldest step held). The precious first step is
  // kept for good.
  if (precious_ == number) return false;
  if (step->holds.empty() && step->ever_held && groups_.size() >= config_.expected_groups) {
    free_step(number);
    return true;
  }
  return false;
}

void StepQueue::free_step(std::int64_t step) {
  steps_.erase(step);
  freed_.push_back(step);
}

// ---- Reader groups -------------------------------------------------------------------------------

StepQueue::Group& StepQueue::group(const std::string& name, std::uint32_t rank) {
  auto it = groups_.find(name);
  if (it == groups_.end()) throw QueueError("no reader group '" + name + "' has joined this stream");
  if (!it->second.members.count(rank)) {
    throw QueueError("reader " + std::to_string(rank) + " is not a member of group '" + name + "'");
  }
  return it->second;
}

void StepQueue::join(const std::string& name, std::uint32_t rank, const GroupConfig& config) {
  if (config.size == 0) throw QueueError("join: a group needs at least 1 reader");
  if (rank >= config.size) {
    throw QueueError("join: reader rank " + std::to_string(rank) + " is out of range for group '" +
                     name + "' of " + std::to_string(config.size) + " readers");
  }
  auto [it, created] = groups_.try_emplace(name);
  Group& group = it->second;
  if (!created && (group.config.size != config.size || group.config.policy != config.policy ||
                   group.config.distribution != config.distribution)) {
    throw QueueError("join: group '" + name + "' has " + std::to_string(group.config.size) +
                     " readers, policy " + policy_text(group.config.policy) +
                     " and step distribution " + distribution_name(group.config.distribution) +
                     "; this reader asked for " + std::to_string(config.size) + ", " +
                     policy_text(config.policy) + " and " + distribution_name(config.distribution));
  }
  if (created) {
    group.config = config;
    for (auto& [number, step] : steps_) {
      // The precious first step is every new group's, whatever its start.
      if (config.start == StartAt::kOldest || precious_ == number) {
        step.holds.emplace(name, GroupHold{});
        step.ever_held = step.ever_held || step.complete;
      }
    }
  }
  if (!group.members.insert(rank).second) {
    throw QueueError("join: reader " + std::to_string(rank) + " of group '" + name +
                     "' has already joined");
  }
  group.last_handed[rank] = -1;
  if (group.members.size() == group.config.size) group.assembled = true;
  if (created && groups_.size() == config_.expected_groups) {
    // The last expected group: steps kept for it that it does not take (it starts at the newest)
    // go now.
    std::vector<std::int64_t> numbers;
    for (const auto& [number, step] : steps_) numbers.push_back(number);
    for (std::int64_t number : numbers) settle(number);
  }
}

void StepQueue::assign_turns(const std::string& name, Group& group) {
  if (group.config.distribution != StepDistribution::kRoundRobin || group.members.empty()) return;
  const std::vector<std::uint32_t> members(group.members.begin(), group.members.end());
  for (auto& [number, step] : steps_) {
    auto hold = step.holds.find(name);
    if (hold == step.holds.end() || hold->second.assigned || !hold->second.readers.empty()) {
      continue;
    }
    if (!step.complete) break;  // turns go in step order
    hold->second.assigned = members[group.turns++ % members.size()];
  }
}

StepQueue::Step* StepQueue::candidate_for(const std::string& name, Group& group,
                                          std::uint32_t rank) {
  const StepDistribution distribution = group.config.distribution;
  if (distribution == StepDistribution::kRoundRobin) assign_turns(name, group);
  const std::int64_t after = group.last_handed[rank];
  for (auto& [number, step] : steps_) {
    auto hold = step.holds.find(name);
    if (hold == step.holds.end()) continue;
    const GroupHold& held = hold->second;
    switch (distribution) {
      case StepDistribution::kAll:
        // The oldest step after the last one it was handed whose reader snapshot (if taken)
        // includes it.
        if (number <= after) continue;
        if (!held.readers.empty() &&
            !std::binary_search(held.readers.begin(), held.readers.end(), rank)) {
          continue;
        }
        return &step;
      case StepDistribution::kRoundRobin:
        if (!held.readers.empty() || held.assigned != rank) continue;  // another's turn
        return &step;
      case StepDistribution::kOnDemand:
        if (!held.readers.empty()) continue;  // handed to another reader
        return &step;                         // the oldest not handed yet (incomplete: wait for it)
    }
  }
  return nullptr;
}

bool StepQueue::has_unhanded(const std::string& name) const {
  return std::any_of(steps_.begin(), steps_.end(), [&](const auto& entry) {
    auto hold = entry.second.holds.find(name);
    return hold != entry.second.holds.end() && hold->second.readers.empty();
  });
}

Delivery StepQueue::next(const std::string& name, std::uint32_t rank) {
  Group& group = this->group(name, rank);
  if (auto holding = group.holding.find(rank); holding != group.holding.end()) {
    throw QueueError("next step: reader " + std::to_string(rank) + " of group '" + name +
                     "' still holds " + step_text(holding->second) + "; release it first");
  }
  // A group starts once all its readers have joined, so that none misses the first steps; once
  // the stream has ended with nothing left to read, there is nothing to wait for.
  if (!group.assembled) {
    Delivery none;
    if (ended_ && slots_taken() == 0) none.kind = Delivery::Kind::kEnd;
    return none;
  }
  const bool whole = group.config.distribution != StepDistribution::kAll;
  const std::int64_t after = group.last_handed[rank];
  Step* candidate = candidate_for(name, group, rank);
  // An aborted step older than the candidate comes first. A reader of a group that hands steps
  // whole is told of every aborted step, whatever it was handed since.
  for (Notice& notice : group.notices) {
    if (notice.told.count(rank) || (!whole && notice.step <= after)) continue;
    if (candidate != nullptr && candidate->number < notice.step) break;
    notice.told.insert(rank);
    group.last_handed[rank] = std::max(after, notice.step);
    Delivery skipped;
    skipped.kind = Delivery::Kind::kSkipped;
    skipped.step = notice.step;
    skipped.reason = notice.reason;
    forget_told_notices(group);
    return skipped;
  }
  if (candidate == nullptr) {
    Delivery none;
    // A step not handed yet may still come to this reader (the turn of a reader that leaves).
    none.kind =
        ended_ && !(whole && has_unhanded(name)) ? Delivery::Kind::kEnd : Delivery::Kind::kWait;
    return none;
  }
  if (!candidate->complete) return Delivery{};  // kWait: it becomes visible all at once
  GroupHold& hold = candidate->holds.at(name);
  if (hold.readers.empty()) {
    if (whole) {
      hold.readers = {rank};
      hold.assigned.reset();
    } else {
      hold.readers.assign(group.members.begin(), group.members.end());
    }
    ++group.stats.delivered;
  }
  hold.handed.insert(rank);
  group.holding[rank] = candidate->number;
  group.last_handed[rank] = std::max(after, candidate->number);
  group.stats.position = std::max(group.stats.position, candidate->number);
  Delivery delivery;
  delivery.kind = Delivery::Kind::kStep;
  delivery.step = candidate->number;
  delivery.readers = hold.readers;
  return delivery;
}

void StepQueue::forget_told_notices(Group& group) {
  const bool whole = group.config.distribution != StepDistribution::kAll;
  std::erase_if(group.notices, [&](const Notice& notice) {
    return std::all_of(group.members.begin(), group.members.end(), [&](std::uint32_t r) {
      return notice.told.count(r) > 0 || (!whole && group.last_handed[r] >= notice.step);
    });
  });
}

void StepQueue::release(const std::string& name, std::uint32_t rank, std::int64_t step) {
  Group& group = this->group(name, rank);
  auto holding = group.holding.find(rank);
  if (holding == group.holding.end() || holding->second != step) {
    throw QueueError("release: reader " + std::to_string(rank) + " of group '" + name +
                     "' does not hold " + step_text(step) +
                     (holding == group.holding.end()
                          ? std::string(" (it holds no step)")
                          : " (it holds " + step_text(holding->second) + ")"));
  }
  group.holding.erase(holding);
  steps_.at(step).holds.at(name).released.insert(rank);
  settle(step);
}

void StepQueue::leave(const std::string& name, std::uint32_t rank) {
  Group& group = this->group(name, rank);
  group.members.erase(rank);
  group.holding.erase(rank);
  group.last_handed.erase(rank);
  for (Notice& notice : group.notices) notice.told.erase(rank);
  // Its turns not taken yet go to the next member after it in rank order (cyclically).
  std::optional<std::uint32_t> heir;
  if (!group.members.empty()) {
    auto next = group.members.upper_bound(rank);
    heir = next != group.members.end() ? *next : *group.members.begin();
  }
  std::vector<std::int64_t> numbers;
  for (auto& [number, step] : steps_) {
    auto hold = step.holds.find(name);
    if (hold == step.holds.end()) continue;
    // Its share of a step it was handed (or will not be handed now) is given back.
    const auto& readers = hold->second.readers;
    if (std::binary_search(readers.begin(), readers.end(), rank)) {
      hold->second.released.insert(rank);
    }
    if (hold->second.assigned == rank) hold->second.assigned = heir;
    numbers.push_back(number);
  }
  for (std::int64_t number : numbers) settle(number);
}

// ---- Introspection -------------------------------------------------------------------------------

QueueStats StepQueue::stats() const {
  QueueStats out = counters_;
  out.steps_held = slots_taken();
  if (auto precious = precious_step()) out.precious_step = *precious;
  for (const auto& [name, group] : groups_) {
    GroupStats stats = group.stats;
    stats.readers = group.members.size();
    out.groups.emplace(name, stats);
  }
  return out;
}

std::vector<std::int64_t> StepQueue::held_steps() const {
  std::vector<std::int64_t> out;
  for (const auto& [number, step] : steps_) {
    if (!kept_aside(step)) out.push_back(number);
  }
  return out;
}

std::optional<std::int64_t> StepQueue::precious_step() const {
  if (!precious_ || find_step(*precious_) == nullptr) return std::nullopt;
  return precious_;
}

bool StepQueue::is_complete(std::int64_t step) const {
  const Step* held = find_step(step);
  return held != nullptr && held->complete;
}

std::vector<std::int64_t> StepQueue::take_freed() {
  std::vector<std::int64_t> out;
  out.swap(freed_);
  return out;
}

}  // namespace slipstream::stream
