// The queue state machine of one stream: which steps are held, which writers have begun and ended
// them, which reader groups are entitled to them, who has read and released them, and when a
// writer must wait for a slot. Pure logic (no I/O, no clock, no locking): the server drives it
// under the stream's lock and parks the requests it says must wait.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace slipstream::stream {

/// A request that breaks the queue's rules (a step that does not increase, an unknown writer or
/// reader, a reader that asks for a step while it holds one, ...). what() says what was expected.
class QueueError : public std::runtime_error {
 public:
  explicit QueueError(const std::string& message) : std::runtime_error(message) {}
};

/// What a group does when it is behind.
///   kBlock:   it sees every step; a writer's begin-step waits for a slot while the group holds
///             the steps that fill the queue.
///   kDiscard: writers never wait for it: a step begun while the group is behind (it has a step it
///             has not started reading) is skipped for it, and a step it has not started reading
///             is taken from it when a writer needs the slot. Both are counted as discarded.
enum class QueuePolicy { kBlock, kDiscard };

/// Where a group that joins after steps exist begins.
///   kOldest: at the oldest step still held (nothing held yet: at the first step).
///   kNewest: at the next step a writer begins.
enum class StartAt { kOldest, kNewest };

/// How a group's steps are shared among its readers.
///   kAll:        every reader gets every step the group is entitled to, and a share of its
///                chunks by the group's strategy (the step's reader table is every member).
///   kRoundRobin: each step goes whole to one reader, in turn: the group's k-th step (counting
///                the steps handed to it, in step order) to its members in ascending rank order,
///                k mod M (M: its members when the step is assigned, all `size` of them until
///                one leaves). A step assigned to a reader that leaves before taking it goes to
///                the next member after it in rank order (cyclically). Deterministic.
///   kOnDemand:   each step goes whole to whichever reader asks first (next()).
/// A step handed whole has a reader table of that reader alone, so the chunk strategy gives it
/// every chunk; the group is done with it when that reader releases it or leaves. A reader is
/// never handed a step handed to another reader of its group.
enum class StepDistribution { kAll, kRoundRobin, kOnDemand };

/// The name of `distribution` on the wire and in INFO: all, round_robin, on_demand.
const char* distribution_name(StepDistribution distribution) noexcept;

struct StreamConfig {
  /// N: a step is complete when this many writers (minus the ones that failed, see
  /// end_on_writer_failure) have ended it.
  std::uint32_t writers = 1;
  /// L: steps held at once, counted from begin-step (the slot is reserved when the first writer
  /// begins a step), so that L = 1 means one step in memory. At least 1.
  std::size_t queue_limit = 2;
  /// Groups the writers wait for: until this many groups have joined, complete steps that no
  /// group holds, or that the groups so far have all released, are kept (writers wait for a
  /// slot) for the groups still to come, instead of being dropped or freed, so that each
  /// expected group sees the steps from the first. 0: steps no group holds are dropped when a
  /// slot is needed, oldest first, and counted.
  std::uint32_t expected_groups = 0;
  /// When a writer fails: true ends the stream after the steps already complete; false goes on
  /// with the surviving writers.
  bool end_on_writer_failure = false;
  /// ADIOS2 SST's FirstTimestepPrecious: the first step that completes is kept for the stream's
  /// life, and every group created later (whatever its start) is entitled to it and is handed it
  /// first. It takes a slot of the queue limit only while some group holds it (is entitled to it
  /// and has not released it); once every such group has released it, it is kept without a
  /// slot. The queue never frees it (take_freed() never names it): its owner drops it with the
  /// whole queue.
  bool first_step_precious = false;
};

struct GroupConfig {
  std::uint32_t size = 1;  // M, at least 1
  QueuePolicy policy = QueuePolicy::kBlock;
  StartAt start = StartAt::kOldest;
  /// Every member must give the same (as size and policy).
  StepDistribution distribution = StepDistribution::kAll;
};

/// What next() hands a reader.
struct Delivery {
  enum class Kind {
    kStep,      // `step` is complete: read its chunks, then release(step)
    kSkipped,   // `step` was aborted (reason in `reason`); nothing to release
    kWait,      // nothing yet: ask again when the stream changes
    kEnd,       // the writers closed the stream and every step for this reader has been seen
  };
  Kind kind = Kind::kWait;
  std::int64_t step = -1;
  std::string reason;
  /// For kStep: the group's readers for this step (ascending ranks that were members when the
  /// step was handed to the group). A reader's index in it is its rank for the chunk strategy,
  /// and its size is M for this step; it shrinks when readers leave. For a group whose
  /// distribution is not kAll, the reader alone (the step is handed to it whole).
  std::vector<std::uint32_t> readers;
};

/// Counts for INFO and `slipstream stream info`.
struct GroupStats {
  std::uint64_t delivered = 0;  // steps handed to the group
  std::uint64_t discarded = 0;  // steps skipped for it or taken from it (kDiscard)
  std::uint64_t aborted = 0;    // aborted steps it was told about
  std::int64_t position = -1;   // the newest step any of its readers has been handed
  std::size_t readers = 0;      // members now
};

struct QueueStats {
  std::size_t steps_held = 0;
  std::uint64_t steps_completed = 0;
  std::uint64_t steps_aborted = 0;
  std::uint64_t steps_dropped_unread = 0;  // complete, no group held them, slot needed
  std::int64_t newest_complete = -1;
  /// The precious first step kept (StreamConfig::first_step_precious), -1 when none. It is
  /// counted in steps_held only while a group holds it.
  std::int64_t precious_step = -1;
  std::map<std::string, GroupStats> groups;
};

/// One stream's steps and reader groups.
///
/// Contract of the writer side: each writer rank in 0..N-1 calls begin(step) and then end(step),
/// with step numbers that increase per writer (they need not be consecutive; the writers of a step
/// agree on its number). begin() returns false when the writer must wait for a slot; it may then
/// be called again for the same step. close_writer() once a writer is done.
///
/// Thread safety: none; the owner serialises all calls.
class StepQueue {
 public:
  explicit StepQueue(StreamConfig config);

  const StreamConfig& config() const noexcept { return config_; }

  // ---- Writers -------------------------------------------------------------------------------
  /// Writer `rank` begins `step`. True: the step has a slot (reserved now by the first writer to
  /// begin it, or earlier). False: the queue is full; call again once the stream changes.
  bool begin(std::uint32_t rank, std::int64_t step);
  /// Writer `rank` reserves `step` ahead, at the end of its previous step, so that its begin
  /// costs no round trip: as begin(), but only when the step is held already or a slot is free
  /// without waiting or making room; false otherwise (nothing changed). A reservation is a begin
  /// the writer may withdraw() until it confirm()s it (its first chunk, attribute or end of the
  /// step, or a plain begin of it); closing withdraws it (the writer is done), failing
  /// confirms it, so the step is aborted as any step the writer began and did not end.
  /// A begin of another step withdraws every writer's unconfirmed reservation of the reserved
  /// step (the writers agree on step numbers, so they all guessed wrong), so that no reservation
  /// holds a slot a begin waits for.
  bool reserve(std::uint32_t rank, std::int64_t step);
  /// The writer uses its reservation of `step`: from now on it is an ordinary begin.
  void confirm(std::uint32_t rank, std::int64_t step);
  /// The writer takes back its reservation of `step` (it began another step, or closed): as if
  /// it had never reserved it. A step only reservations held goes, unseen by any group.
  void withdraw(std::uint32_t rank, std::int64_t step);
  /// The step `rank` reserved and has not confirmed, if any.
  std::optional<std::int64_t> reservation(std::uint32_t rank) const;
  /// Writer `rank` ends the step it began. True when this end completed the step, which then
  /// becomes visible to the groups entitled to it, all at once.
  bool end(std::uint32_t rank, std::int64_t step);
  /// The writer is done. Once every writer has closed (or failed), readers get kEnd after the
  /// steps already complete.
  void close_writer(std::uint32_t rank);
  /// The writer died or timed out: every step it had begun and not ended is aborted with
  /// `reason`; then the stream goes on without it or ends (StreamConfig::end_on_writer_failure).
  void fail_writer(std::uint32_t rank, const std::string& reason);
  /// Aborts an incomplete step (the server's step timeout): its slot is freed and every group
  /// entitled to it is told, in order, that it was skipped and why.
  void abort_step(std::int64_t step, const std::string& reason);
  /// True once no more steps will come: every writer closed or failed, or a failure ended it.
  bool ended() const noexcept { return ended_; }

  // ---- Reader groups -------------------------------------------------------------------------
  /// Reader `rank` (0..size-1) joins `group`, creating it with `config` if it is new; a group's
  /// later joins must give the same size, policy and distribution (QueueError naming both). A
  /// rank already joined is an error. A group created while a precious first step is kept is
  /// entitled to it (StreamConfig::first_step_precious).
  void join(const std::string& group, std::uint32_t rank, const GroupConfig& config);
  /// The next thing for reader `rank` of `group`; see Delivery. Nothing is handed out (kWait)
  /// until all the group's readers have joined once, so that none misses the first steps; after
  /// that, readers that leave shrink the group. Errors when the reader still holds a step it has
  /// not released. Steps come oldest first; in a group whose distribution is not kAll, only the
  /// steps handed to this reader (a step reassigned from a reader that left may be older than
  /// the last one this reader got), and every reader is still told of every aborted step the
  /// group was entitled to (kSkipped), once, before any newer step it is handed. kEnd comes once
  /// the stream has ended and no step the group holds can still be handed to this reader.
  Delivery next(const std::string& group, std::uint32_t rank);
  /// Reader `rank` is done with `step` (the one next() handed it). The step is freed once every
  /// reader it was handed to, in every group entitled to it, has released it or left.
  void release(const std::string& group, std::uint32_t rank, std::int64_t step);
  /// The reader is gone (closed or died): it releases what it held; later steps are shared
  /// among the group's other readers.
  void leave(const std::string& group, std::uint32_t rank);

  // ---- Introspection -------------------------------------------------------------------------
  QueueStats stats() const;
  /// Steps held now, oldest first (complete, or begun and not yet complete); a precious first
  /// step that no group holds is not among them (it takes no slot).
  std::vector<std::int64_t> held_steps() const;
  /// The precious first step kept, if any (held by groups or not).
  std::optional<std::int64_t> precious_step() const;
  /// True when `step` is held and complete (its chunk table may be read).
  bool is_complete(std::int64_t step) const;
  /// Steps freed since the last call, oldest first: the owner drops their data.
  std::vector<std::int64_t> take_freed();

 private:
  struct GroupHold {
    std::vector<std::uint32_t> readers;  // snapshot when handed to the group
    std::set<std::uint32_t> handed;      // readers that next() gave it to
    std::set<std::uint32_t> released;    // readers done with it (released or left)
    std::optional<std::uint32_t> assigned;  // kRoundRobin: whose turn it is, not yet handed
  };
  struct Step {
    std::int64_t number = 0;
    bool complete = false;
    // Some group was entitled to it once complete: freed as soon as no group holds it. A step
    // that no group was ever entitled to is kept for groups still to come, until its slot is
    // needed.
    bool ever_held = false;
    std::set<std::uint32_t> begun, ended;
    std::map<std::string, GroupHold> holds;  // groups entitled to it
    // Created by a reservation that nobody has used yet: withdrawn, it leaves no trace (the
    // newest step begun before it, and the discard groups that counted it as skipped).
    bool tentative = false;
    std::int64_t newest_before = -1;
    std::vector<std::string> discarded_for;
  };
  struct Reservation {
    std::int64_t step = -1;
    std::optional<std::int64_t> last_begun;  // the writer's before the reservation
  };
  struct Notice {
    std::int64_t step;
    std::string reason;
    std::set<std::uint32_t> told;
  };
  struct Group {
    GroupConfig config;
    std::set<std::uint32_t> members;
    std::map<std::uint32_t, std::int64_t> last_handed;   // per reader: newest step handed
    std::map<std::uint32_t, std::int64_t> holding;       // per reader: step handed, not released
    std::vector<Notice> notices;                         // aborted steps, oldest first
    bool assembled = false;  // all `size` readers have joined once: steps are handed out
    std::uint64_t turns = 0;  // kRoundRobin: steps assigned so far
    GroupStats stats;
  };

  Step* find_step(std::int64_t step);
  const Step* find_step(std::int64_t step) const;
  Group& group(const std::string& name, std::uint32_t rank);
  void check_writer(std::uint32_t rank, const char* what) const;
  std::uint32_t live_writers() const noexcept;
  // Whether `group` is behind: it holds a complete step none of its readers has started.
  bool behind(const Group& group, const std::string& name) const;
  // True for the precious first step once no group holds it: kept, but it takes no slot.
  bool kept_aside(const Step& step) const noexcept;
  // Steps that take a slot of the queue limit (every held step but one kept aside).
  std::size_t slots_taken() const noexcept;
  // kRoundRobin: gives the complete steps of `name` that have no reader yet their turns, in
  // step order (stopping at the first incomplete one).
  void assign_turns(const std::string& name, Group& group);
  // The step of `name` reader `rank` may be handed next, or null.
  Step* candidate_for(const std::string& name, Group& group, std::uint32_t rank);
  // True when `name` holds a step not yet handed to any of its readers.
  bool has_unhanded(const std::string& name) const;
  // Makes room for one more step if the rules allow; true when a slot is free.
  bool free_a_slot();
  bool all_live_writers_ended(const Step& step) const;
  // Marks a step complete (visible to its groups) and settles it.
  void complete(std::int64_t step);
  // Drops the notices every member has been told about (or has read past).
  void forget_told_notices(Group& group);
  // A group is done with a step when every reader it was handed to released it; frees the step
  // when no group holds it any more. Returns true when the step was freed.
  bool settle(std::int64_t step);
  void free_step(std::int64_t step);
  void abort_held_step(std::int64_t step, const std::string& reason);
  void check_end();
  // The checks of begin() and reserve(); QueueError when `step` cannot be begun by `rank`.
  void check_begin(std::uint32_t rank, std::int64_t step) const;
  // Creates `step` in a free slot, begun by `rank`; the discard groups that skip it go to
  // `discarded` (when not null).
  Step& create(std::uint32_t rank, std::int64_t step, std::vector<std::string>* discarded);

  StreamConfig config_;
  std::map<std::int64_t, Step> steps_;                 // held steps by number
  std::map<std::uint32_t, std::int64_t> last_begun_;   // per writer
  std::map<std::uint32_t, Reservation> reservations_;  // per writer, not confirmed yet
  std::set<std::uint32_t> closed_, failed_;
  std::map<std::string, Group> groups_;
  std::vector<std::int64_t> freed_;
  bool ended_ = false;
  std::int64_t newest_begun_ = -1;
  std::optional<std::int64_t> precious_;  // the precious first step, once complete
  QueueStats counters_;
};

}  // namespace slipstream::stream
