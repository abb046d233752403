// The shared-memory fast path, server side: segments (one sealed memfd per tensor), the pool that
// bounds them (--shm-size), and each connection's loans and leases. See docs/architecture.md,
// "Shared-memory fast path", for why every segment is its own memfd.
//
// Thread-safety: SharedMemory and ShmCounters may be used from any thread. A ShmSession belongs to
// one connection and is touched only on that connection's I/O thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/buffer.hpp"
#include "server/shm/spare_pool.hpp"
#include "server/store/memory_reservation.hpp"

namespace slipstream::server {

/// Figures for INFO memory / stats. Relaxed atomics: figures, not synchronisation.
struct ShmCounters {
  std::atomic<std::size_t> used_bytes{0};       ///< live segments + outstanding loans + spares
  std::atomic<std::uint64_t> files{0};          ///< memfds open (segments + loans + spares)
  std::atomic<std::size_t> spare_bytes{0};      ///< of used_bytes: spares made ahead (ShmSparePool)
  std::atomic<std::uint64_t> spares{0};         ///< of files: spares made ahead (or being made)
  std::atomic<std::uint64_t> spares_ready{0};   ///< of spares: made, ready to be lent
  std::atomic<std::uint64_t> pool_hits{0};      ///< loans handed out from a spare
  std::atomic<std::uint64_t> pool_misses{0};    ///< loans whose file was made on the spot
  std::atomic<std::uint64_t> segments{0};       ///< live sealed segments
  std::atomic<std::uint64_t> writer_segments{0};  ///< live stream writer segments
  std::atomic<std::uint64_t> loans{0};          ///< loans lent and not yet committed or released
  std::atomic<std::uint64_t> loans_ahead{0};    ///< of loans: lent ahead with a commit (LEND)
  std::atomic<std::size_t> loans_ahead_bytes{0};  ///< their files' bytes (bounded: lend_ahead)
  std::atomic<std::uint64_t> leases{0};         ///< views held by clients
  std::atomic<std::uint64_t> attached_clients{0};
  std::atomic<std::uint64_t> total_commits{0};
  std::atomic<std::uint64_t> total_views{0};        ///< zero-copy leases of stored segments
  std::atomic<std::uint64_t> total_view_copies{0};  ///< leases of a copy (tensor not in shm)
  std::atomic<std::uint64_t> total_refusals{0};     ///< requests refused because the pool was full
  std::atomic<std::uint64_t> total_descriptors_passed{0};  ///< memfds sent to clients (SCM_RIGHTS)
};

/// Pool bytes held by a loan or a segment; given back on destruction.
class ShmReservation {
 public:
  ShmReservation(std::shared_ptr<ShmCounters> counters, std::size_t bytes)
      : counters_(std::move(counters)), bytes_(bytes) {}
  ShmReservation(ShmReservation&& other) noexcept
      : counters_(std::move(other.counters_)), bytes_(std::exchange(other.bytes_, 0)) {}
  ShmReservation(const ShmReservation&) = delete;
  ShmReservation& operator=(const ShmReservation&) = delete;
  ShmReservation& operator=(ShmReservation&&) = delete;
  ~ShmReservation();

 private:
  std::shared_ptr<ShmCounters> counters_;
  std::size_t bytes_;
};

/// A memfd that nobody can write any more (sealed F_SEAL_WRITE | SHRINK | GROW | SEAL), mapped
/// read-only: the storage of one tensor's bytes (a Buffer adopts it). Readers get its descriptor.
class ShmSegment final : public BufferStorage {
 public:
  ShmSegment(int fd, void* mapping, std::size_t size, ShmReservation reservation,
             std::shared_ptr<ShmCounters> counters);
  ~ShmSegment() override;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  int fd() const noexcept { return fd_; }
  std::size_t size() const noexcept { return size_; }
  char* data() const noexcept { return static_cast<char*>(mapping_); }

 private:
  int fd_;
  void* mapping_;
  std::size_t size_;
  ShmReservation reservation_;
  std::shared_ptr<ShmCounters> counters_;
};

/// A writable memfd lent to one client (its size sealed), which the client fills and commits.
/// Besides its room in the pool it holds its bytes against --maxmemory (`memory`), from the moment
/// it is lent: pages a client is filling are server memory even before they are a value.
class ShmLoan {
 public:
  /// `size` is the loan's bytes; its file may be larger (`file_size`, whole pages).
  ShmLoan(int fd, std::size_t size, std::size_t file_size, ShmReservation reservation,
          MemoryReservation memory, std::shared_ptr<ShmCounters> counters);
  ~ShmLoan();
  ShmLoan(const ShmLoan&) = delete;
  ShmLoan& operator=(const ShmLoan&) = delete;

  int fd() const noexcept { return fd_; }
  std::size_t size() const noexcept { return size_; }
  /// Hands over the --maxmemory reservation, for the committer to release once the stored value
  /// counts the bytes (so they are never counted twice, nor dropped while the commit runs).
  MemoryReservation take_memory() noexcept { return std::move(memory_); }

 private:
  friend class SharedMemory;
  int fd_;
  std::size_t size_;
  std::size_t file_size_;
  std::size_t ahead_bytes_ = 0;  // counted in loans_ahead_bytes while it lives (lend_ahead)
  std::optional<ShmReservation> reservation_;
  MemoryReservation memory_;
  std::shared_ptr<ShmCounters> counters_;
};

/// A memfd lent to one stream writer for the chunks of its steps, reused step after step: its
/// size is sealed from the start, the writer maps it writable once, and from its first use in a
/// step (seal_for_readers) nobody else can write it or map it writable (F_SEAL_FUTURE_WRITE), so
/// readers may be handed its descriptor. The server maps it read-only. Unlike ShmSegment its bytes
/// may change while it lives: the stream hands it to a writer again only once the step that used
/// it has been freed. Holds its room in the pool and its bytes against --maxmemory.
class ShmWriterSegment {
 public:
  ShmWriterSegment(std::uint64_t id, int fd, void* mapping, std::size_t size,
                   ShmReservation reservation, MemoryReservation memory,
                   std::shared_ptr<ShmCounters> counters);
  ~ShmWriterSegment();
  ShmWriterSegment(const ShmWriterSegment&) = delete;
  ShmWriterSegment& operator=(const ShmWriterSegment&) = delete;

  /// Unique among the server's writer segments (never reused), so a client may cache mappings
  /// by id.
  std::uint64_t id() const noexcept { return id_; }
  int fd() const noexcept { return fd_; }
  std::size_t size() const noexcept { return size_; }
  const char* data() const noexcept { return static_cast<const char*>(mapping_); }
  /// Adds F_SEAL_FUTURE_WRITE | F_SEAL_SEAL once (the writer's own mapping stays writable).
  /// False with `error` set when the kernel refuses.
  bool seal_for_readers(std::string* error);

 private:
  std::uint64_t id_;
  int fd_;
  void* mapping_;
  std::size_t size_;
  bool sealed_ = false;
  ShmReservation reservation_;
  MemoryReservation memory_;
  std::shared_ptr<ShmCounters> counters_;
};

/// Where a server process starts numbering ids it hands to clients (writer segments, colocated
/// chunks): random in a 60-bit space, so that an id a client or another shard kept from a
/// previous process of this server names nothing in this one.
std::uint64_t random_id_start();

/// Why a shared-memory allocation failed.
enum class ShmFailure { kNone, kFull, kSystem };

/// The server's shared-memory pool: creates loans and segments, bounded by a byte capacity
/// (--shm-size) and by a number of open memfds (half the process's file-descriptor limit).
/// Loans come from spares made ahead of demand (ShmSparePool) when one of the size is ready.
class SharedMemory {
 public:
  /// `capacity` 0 disables the fast path.
  explicit SharedMemory(std::size_t capacity);

  bool enabled() const noexcept { return capacity_ > 0; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t max_files() const noexcept { return max_files_; }
  const std::shared_ptr<ShmCounters>& counters() const noexcept { return counters_; }

  /// A new loan of `size` bytes (> 0), which keeps `memory` (its bytes counted against
  /// --maxmemory) until it is committed or released. On failure returns null with `failure` and
  /// `error` set: kFull when the pool has no room, kSystem when the kernel refused; `memory` is
  /// released then.
  std::unique_ptr<ShmLoan> lend(std::size_t size, MemoryReservation memory, ShmFailure* failure,
                                std::string* error);

  /// A loan of `size` bytes for a client's next put of that size, lent with the commit of its
  /// last one (SS.SHM.COMMIT ... LEND) so that the next put costs one round trip: only from a
  /// spare already made (never a file made on the spot), and only while the loans lent ahead and
  /// not yet used hold at most a quarter of the pool (kAheadShare), so clients holding them
  /// between puts cannot take the room of values. Null when either is not the case (`memory` is
  /// released then); nothing is counted as a refusal.
  std::unique_ptr<ShmLoan> lend_ahead(std::size_t size, MemoryReservation memory);
  static constexpr std::size_t kAheadShare = 4;  // lent-ahead loans: at most capacity / 4

  /// Takes the loan over as read-only storage: seals it against writing (which the kernel refuses
  /// while anyone still maps it writable) and maps it read-only. Returns nullopt with `error` set
  /// if it cannot be sealed; the loan is released either way.
  std::optional<Buffer> seal(std::unique_ptr<ShmLoan> loan, std::string* error);

  /// A new sealed segment holding a copy of `bytes` (one copy, written with pwrite so no mapping
  /// is writable). nullopt with `failure`/`error` set when the pool is full or the kernel refused.
  std::optional<Buffer> copy_in(std::string_view bytes, ShmFailure* failure, std::string* error);

  /// A segment over the sealed memory file that holds `buffer` (its storage a SealedFile: a model
  /// worker's output), counted in the pool like any other; the file is shared, not copied.
  /// nullopt with `failure`/`error` set when the pool is full or the kernel refused (`buffer`
  /// is left as it was).
  std::optional<Buffer> adopt_sealed(const Buffer& buffer, ShmFailure* failure, std::string* error);

  /// A new writer segment of `size` bytes (> 0) holding `memory`; null with `failure`/`error`
  /// set when the pool is full or the kernel refused (`memory` is released then).
  std::shared_ptr<ShmWriterSegment> create_writer_segment(std::size_t size,
                                                          MemoryReservation memory,
                                                          ShmFailure* failure,
                                                          std::string* error);

  /// The segment that holds `buffer`'s bytes, or nullptr if they are ordinary heap memory.
  static const ShmSegment* segment_of(const Buffer& buffer) noexcept;

 private:
  // Reserves `bytes` and one file, dropping the spares if that makes room; nullopt (and a
  // refusal counted) when either limit is reached.
  std::optional<ShmReservation> reserve(std::size_t bytes, std::string* error);
  std::optional<ShmReservation> try_reserve(std::size_t bytes, std::string* error);
  // A buffer over a new segment: `fd` sealed and mapped read-only at `mapping`, `size` bytes.
  Buffer segment_buffer(int fd, void* mapping, std::size_t size, ShmReservation reservation);

  std::size_t capacity_;
  std::size_t max_files_;
  std::shared_ptr<ShmCounters> counters_;
  std::atomic<std::uint64_t> next_writer_segment_{random_id_start()};
  std::unique_ptr<ShmSparePool> spares_;  // last: its thread stops before the rest goes
};

/// One connection's loans and leases, created by SS.SHM.ATTACH. Destroying it (when the
/// connection closes, however the client ended) releases them all.
class ShmSession {
 public:
  explicit ShmSession(std::shared_ptr<ShmCounters> counters);
  ~ShmSession();
  ShmSession(const ShmSession&) = delete;
  ShmSession& operator=(const ShmSession&) = delete;

  /// Keeps the loan; returns its id (unique within the connection).
  std::uint64_t add_loan(std::unique_ptr<ShmLoan> loan);
  /// Removes and returns the loan, or null for an unknown id.
  std::unique_ptr<ShmLoan> take_loan(std::uint64_t id);
  /// Keeps `owner` (which keeps a segment alive) until released; returns the lease id.
  std::uint64_t add_lease(std::shared_ptr<const void> owner);
  /// Releases a lease or a loan; false for an unknown id.
  bool release(std::uint64_t id);

  std::size_t loans() const noexcept { return loans_.size(); }
  std::size_t leases() const noexcept { return leases_.size(); }

  // ---- Stream segments whose descriptors this connection was passed and still maps (NEXT ...
  // MAP CACHED): their chunks are named without passing the descriptor again. The client says
  // which mappings it dropped; at most kPassedSegmentsMax are remembered (past that the set
  // starts again, and descriptors are passed anew: a client that already maps one closes it).
  static constexpr std::size_t kPassedSegmentsMax = 4096;
  bool was_passed(std::uint64_t segment) const { return passed_segments_.contains(segment); }
  void note_passed(std::uint64_t segment);
  void forget_passed(std::uint64_t segment) { passed_segments_.erase(segment); }

 private:
  std::shared_ptr<ShmCounters> counters_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<ShmLoan>> loans_;
  std::unordered_map<std::uint64_t, std::shared_ptr<const void>> leases_;
  std::unordered_set<std::uint64_t> passed_segments_;
};

}  // namespace slipstream::server
