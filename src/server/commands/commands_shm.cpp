// The shared-memory fast path's control commands (SS.SHM.*). Tensor bytes never travel on the
// socket here: a client that SS.SHM.ATTACHed over the Unix socket is handed memfds (SCM_RIGHTS)
// to fill (SS.SHM.LOAN, then SS.SHM.COMMIT) or to read (SS.SHM.VIEW), and gives back what it no
// longer needs (SS.SHM.RELEASE). See docs/architecture.md, "Shared-memory fast path".
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"
#include "server/store/tensor_codec.hpp"

namespace slipstream::server {
namespace {

constexpr std::string_view kNotAttached =
    "ERR shared memory is not attached on this connection: send SS.SHM.ATTACH first (Unix "
    "socket connections only)";

struct OwnedFd {
  explicit OwnedFd(int descriptor) : fd(descriptor) {}
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int fd;
};

ShmSession* attached(CommandContext& c) {
  if (!c.session.shm) c.reply.error(kNotAttached);
  return c.session.shm.get();
}

std::optional<std::uint64_t> parse_id(std::string_view text) {
  auto id = parse_int(text);
  if (!id || *id <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(*id);
}

Outcome attach(CommandContext& c) {
  SharedMemory& shm = c.server.shared_memory();
  if (!shm.enabled()) {
    c.reply.error("ERR shared memory is disabled on this server (--shm-size 0 or --no-shm)");
    return Outcome::kDone;
  }
  if (!c.session.is_local()) {
    c.reply.error("ERR shared memory needs a Unix socket connection (this one is TCP)");
    return Outcome::kDone;
  }
  if (!c.session.shm) c.session.shm = std::make_shared<ShmSession>(shm.counters());
  c.reply.simple("OK");
  return Outcome::kDone;
}

// Keeps `lent` in the session and passes its descriptor with the reply about to be written;
// returns its id, or 0 when the descriptor cannot be duplicated (`error` set, the loan dropped).
std::uint64_t hand_over(CommandContext& c, ShmSession& session, std::unique_ptr<ShmLoan> lent,
                        std::string* error) {
  // A duplicate travels with the reply, so a pipelined command that consumes the loan before
  // the reply is written cannot leave a closed (or reused) descriptor number to be sent.
  auto passed = std::make_shared<const OwnedFd>(::dup(lent->fd()));
  if (passed->fd < 0) {
    *error = "ERR cannot duplicate the loan's descriptor: " + std::string(strerror(errno));
    return 0;
  }
  std::uint64_t id = session.add_loan(std::move(lent));
  c.reply.pass_fd(passed->fd, passed);
  return id;
}

// SS.SHM.FEATURES -> [feature ...]: what this server's fast path offers beyond SS.SHM.ATTACH's
// first form, so a client can ask for it (a server without this command offers none of them).
// "lend-ahead": SS.SHM.COMMIT ... LEND.
Outcome features(CommandContext& c) {
  c.reply.array(1);
  c.reply.bulk("lend-ahead");
  return Outcome::kDone;
}

// SS.SHM.LOAN bytes -> :id, with the loan's memfd passed alongside.
Outcome loan(CommandContext& c) {
  ShmSession* session = attached(c);
  if (session == nullptr) return Outcome::kDone;
  auto bytes = parse_int(c.arg(1));
  if (!bytes || *bytes <= 0) {
    c.reply.error("ERR loan size must be a positive integer");
    return Outcome::kDone;
  }
  const auto size = static_cast<std::size_t>(*bytes);
  if (size > c.server.max_bulk_len()) {
    c.reply.error("ERR loan of " + std::to_string(size) + " bytes exceeds max-bulk-len (" +
                  std::to_string(c.server.max_bulk_len()) + " bytes)");
    return Outcome::kDone;
  }
  // The loan's bytes count against --maxmemory from now on, not only once committed: a client
  // filling many loans holds that memory already.
  std::optional<MemoryReservation> memory = c.server.keyspace().reserve(size);
  if (!memory) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  ShmFailure failure;
  std::string error;
  std::unique_ptr<ShmLoan> lent =
      c.server.shared_memory().lend(size, std::move(*memory), &failure, &error);
  if (!lent) {
    c.reply.error(error);
    return Outcome::kDone;
  }
  const std::uint64_t id = hand_over(c, *session, std::move(lent), &error);
  if (id == 0) {
    c.reply.error(error);
    return Outcome::kDone;
  }
  c.reply.integer(static_cast<std::int64_t>(id));
  return Outcome::kDone;
}

// The loan SS.SHM.COMMIT ... LEND lends for the client's next put of `size` bytes (a spare, within
// the share of the pool such loans may hold), handed to the session; 0 when there is none. Under
// --maxmemory a loan held ahead never takes the last quarter of it: memory for values comes first.
std::uint64_t lend_ahead(CommandContext& c, ShmSession& session, std::size_t size) {
  const Keyspace& keyspace = c.server.keyspace();
  if (keyspace.max_memory() != 0 &&
      keyspace.used_memory() + size > keyspace.max_memory() / 4 * 3) {
    return 0;
  }
  std::optional<MemoryReservation> memory = c.server.keyspace().reserve(size);
  if (!memory) return 0;
  std::unique_ptr<ShmLoan> lent = c.server.shared_memory().lend_ahead(size, std::move(*memory));
  if (!lent) return 0;
  std::string error;
  return hand_over(c, session, std::move(lent), &error);  // 0: the client asks with LOAN instead
}

// SS.SHM.COMMIT id key type d1 [d2 ...] [LEND]: stores the filled loan as the tensor `key`. The
// loan is consumed whatever the outcome. Checks run in AI.TENSORSET's order and before the
// keyspace is touched, so a rejected commit leaves the key as it was. With LEND the reply is
// [OK, id of a new loan of the same size, or nil], the new loan's memfd passed alongside: the
// client's next put of that size needs no SS.SHM.LOAN round trip.
Outcome commit(CommandContext& c) {
  ShmSession* session = attached(c);
  if (session == nullptr) return Outcome::kDone;
  auto id = parse_id(c.arg(1));
  std::unique_ptr<ShmLoan> lent = id ? session->take_loan(*id) : nullptr;
  if (!lent) {
    c.reply.error("ERR no such loan on this connection: " + std::string(c.arg(1)));
    return Outcome::kDone;
  }
  ValuePtr existing = c.server.keyspace().get(c.arg(2));
  if (existing && existing->type() != ValueType::kTensor) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  auto dtype = parse_dtype(c.arg(3));
  if (!dtype) {
    c.reply.error("ERR invalid data type");
    return Outcome::kDone;
  }
  const bool lend_next = c.argc() > 5 && equals_nocase(c.arg(c.argc() - 1), "LEND");
  const std::size_t dims_end = lend_next ? c.argc() - 1 : c.argc();
  std::vector<std::int64_t> shape;
  std::size_t count = 1;
  for (std::size_t i = 4; i < dims_end; ++i) {
    auto dim = parse_int(c.arg(i));
    if (!dim || *dim <= 0) {
      c.reply.error("ERR invalid or negative value found in tensor shape");
      return Outcome::kDone;
    }
    auto d = static_cast<std::size_t>(*dim);
    if (count > std::numeric_limits<std::size_t>::max() / 16 / d) {
      c.reply.error("ERR tensor shape is too large");
      return Outcome::kDone;
    }
    count *= d;
    shape.push_back(*dim);
  }
  if (shape.size() > kMaxTensorRank) {
    c.reply.error("ERR too many dimensions: " + std::to_string(shape.size()) + " (at most " +
                  std::to_string(kMaxTensorRank) + ")");
    return Outcome::kDone;
  }
  if (count * dtype_size(*dtype) != lent->size()) {
    c.reply.error("ERR data length does not match tensor shape and type: the loan has " +
                  std::to_string(lent->size()) + " bytes, the shape needs " +
                  std::to_string(count * dtype_size(*dtype)));
    return Outcome::kDone;
  }
  const std::size_t size = lent->size();
  // Held until the tensor is stored and counts the same bytes (released on every path).
  MemoryReservation admitted = lent->take_memory();
  std::string error;
  std::optional<Buffer> data = c.server.shared_memory().seal(std::move(lent), &error);
  if (!data) {
    c.reply.error(error);
    return Outcome::kDone;
  }
  auto value = std::make_shared<Value>(Tensor{*dtype, std::move(shape), std::move(*data)});
  const bool stored = c.server.keyspace().set_unless_other_type(c.arg(2), std::move(value));
  admitted.release();
  if (!stored) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  c.server.mark_dirty();
  if (!lend_next) {
    c.reply.simple("OK");
    return Outcome::kDone;
  }
  const std::uint64_t next = lend_ahead(c, *session, size);
  c.reply.array(2);
  c.reply.simple("OK");
  if (next != 0) {
    c.reply.integer(static_cast<std::int64_t>(next));
  } else {
    c.reply.null();
  }
  return Outcome::kDone;
}

// SS.SHM.VIEW key -> [id, type, [dims], bytes], with the memfd holding the bytes passed
// alongside. A tensor stored through the socket (heap memory) is first copied into a segment
// (one copy, counted in shm_view_copies), which then becomes the key's storage, so the next view
// of the same value costs no copy.
Outcome view(CommandContext& c) {
  ShmSession* session = attached(c);
  if (session == nullptr) return Outcome::kDone;
  ValuePtr value = c.server.keyspace().get(c.arg(1));
  Stats& stats = c.server.stats();
  (value ? stats.keyspace_hits : stats.keyspace_misses).fetch_add(1, std::memory_order_relaxed);
  if (!value) {
    c.reply.error("ERR tensor key is empty or in a different shard");
    return Outcome::kDone;
  }
  if (value->type() != ValueType::kTensor) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  const Tensor& tensor = value->tensor();
  if (c.argc() > 3 || (c.argc() == 3 && !equals_nocase(c.arg(2), "ENCODED"))) {
    c.reply.error("ERR syntax error: SS.SHM.VIEW key [ENCODED]");
    return Outcome::kDone;
  }
  if (tensor.encoded && c.argc() == 3) {
    c.reply.error("ENCODED the tensor is stored compressed: fetch its frame with AI.TENSORGET "
                  "key META BLOB ENCODED");
    return Outcome::kDone;
  }
  SharedMemory& shm = c.server.shared_memory();
  std::shared_ptr<const void> owner;
  const ShmSegment* segment = SharedMemory::segment_of(tensor.data);
  std::size_t size = tensor.data.size();
  if (tensor.encoded) {
    // A compressed tensor is decoded into a segment that serves this lease alone (the key keeps
    // its frame).
    std::string error;
    std::shared_ptr<const DecodedTensor> decoded =
        decode_tensor(c.server.keyspace(), tensor, &error);
    if (!decoded) {
      c.reply.error(error);
      return Outcome::kDone;
    }
    ShmFailure failure;
    std::optional<Buffer> copy = shm.copy_in(decoded->data.view(), &failure, &error);
    if (!copy) {
      c.reply.error(error);
      return Outcome::kDone;
    }
    segment = SharedMemory::segment_of(*copy);
    size = copy->size();
    owner = std::make_shared<Value>(Tensor{tensor.dtype, tensor.shape, std::move(*copy)});
    shm.counters()->total_view_copies.fetch_add(1, std::memory_order_relaxed);
  } else if (segment != nullptr) {
    owner = value;  // the stored bytes themselves: they outlive overwrites while leased
    shm.counters()->total_views.fetch_add(1, std::memory_order_relaxed);
  } else {
    ShmFailure failure;
    std::string error;
    std::optional<Buffer> copy = shm.copy_in(tensor.data.view(), &failure, &error);
    if (!copy) {
      c.reply.error(error);
      return Outcome::kDone;
    }
    segment = SharedMemory::segment_of(*copy);
    auto moved = std::make_shared<Value>(Tensor{tensor.dtype, tensor.shape, std::move(*copy)});
    owner = moved;
    // If the key was written meanwhile, the copy serves this lease alone.
    c.server.keyspace().replace_unseen(c.arg(1), value.get(), std::move(moved));
    shm.counters()->total_view_copies.fetch_add(1, std::memory_order_relaxed);
  }
  c.reply.pass_fd(segment->fd(), owner);
  std::uint64_t id = session->add_lease(std::move(owner));
  c.reply.array(4);
  c.reply.integer(static_cast<std::int64_t>(id));
  c.reply.bulk(dtype_name(tensor.dtype));
  c.reply.array(tensor.shape.size());
  for (std::int64_t dim : tensor.shape) c.reply.integer(dim);
  c.reply.integer(static_cast<std::int64_t>(size));
  return Outcome::kDone;
}

// SS.SHM.RELEASE id [id ...] -> :released (leases and loans; unknown ids are ignored).
Outcome release(CommandContext& c) {
  ShmSession* session = attached(c);
  if (session == nullptr) return Outcome::kDone;
  std::int64_t released = 0;
  for (std::size_t i = 1; i < c.argc(); ++i) {
    auto id = parse_id(c.arg(i));
    if (id && session->release(*id)) ++released;
  }
  c.reply.integer(released);
  return Outcome::kDone;
}

}  // namespace

void add_shm_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SS.SHM.ATTACH", 1, kFast | kStale, 0, 0, 0, attach, "shm", "",
     "Turns on the shared-memory fast path for this Unix-socket connection (after AUTH): its "
     "replies may then pass file descriptors."},
    {"SS.SHM.FEATURES", 1, kFast | kStale, 0, 0, 0, features, "shm", "",
     "Lists what this server's fast path offers beyond its first form (lend-ahead: SS.SHM.COMMIT "
     "... LEND), so clients ask only for what it understands."},
    {"SS.SHM.LOAN", 2, kWrite | kDenyOom | kFast, 0, 0, 0, loan, "shm", "bytes",
     "Lends a writable shared-memory region of that size: replies its id and passes its memfd."},
    // Not denyoom: the loan's bytes were admitted against --maxmemory when it was lent, so a
    // commit only turns counted bytes into a value, and a granted loan can always be stored.
    {"SS.SHM.COMMIT", -5, kWrite, 2, 2, 1, commit, "shm",
     "id key type d1 [d2 ...] [LEND]",
     "Stores a filled loan as a tensor, sealed so nobody can change it; the loan is consumed. "
     "LEND: replies [OK, id or nil] and passes a new loan of the same size for the next put."},
    {"SS.SHM.VIEW", -2, kReadOnly | kFast, 1, 1, 1, view, "shm", "key [ENCODED]",
     "Leases a tensor's bytes read-only: replies [id, type, [dims], bytes] and passes a memfd. "
     "A compressed tensor is decoded into the lease; with ENCODED, the caller decodes frames "
     "itself: -ENCODED tells it to fetch the frame with AI.TENSORGET ... ENCODED instead."},
    {"SS.SHM.RELEASE", -2, kFast, 0, 0, 0, release, "shm", "id [id ...]",
     "Gives back leases and unused loans; returns how many were released."},
  });
}

}  // namespace slipstream::server
