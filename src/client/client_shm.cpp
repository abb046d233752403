// The shared-memory fast path of the client: loans (regions the server lends, filled here and
// committed without a copy), views (the server's sealed memfds mapped read-only), and the
// shared-memory forms of put, get and unpack. See docs/architecture.md, "Shared-memory fast path".
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/client_impl.hpp"
#include "common/tensor_layout.hpp"
#include "slipstream/client.hpp"

namespace slipstream {

using client::Request;

namespace client {

struct ShmAccess {
  static void set_shared(TensorLoan& loan, void* mapping, int fd, std::size_t size,
                         std::uint64_t id, std::uint64_t generation,
                         std::shared_ptr<ShmLink> link) {
    loan.mapping_ = mapping;
    loan.data_ = static_cast<std::byte*>(mapping);
    loan.fd_ = fd;
    loan.size_ = size;
    loan.id_ = id;
    loan.generation_ = generation;
    loan.link_ = std::move(link);
  }
  static void set_private(TensorLoan& loan, std::size_t size) {
    loan.private_ = std::make_unique_for_overwrite<std::byte[]>(size);
    loan.data_ = loan.private_.get();
    loan.size_ = size;
  }
  static void* mapping(const TensorLoan& loan) { return loan.mapping_; }
  static int fd(const TensorLoan& loan) { return loan.fd_; }
  static std::uint64_t id(const TensorLoan& loan) { return loan.id_; }
  static std::uint64_t generation(const TensorLoan& loan) { return loan.generation_; }
  /// Maps an unmapped shared loan writable, populated at once (the caller is about to write all
  /// of it). On failure the loan is dropped (given back) and ConnectionError thrown.
  static void map_writable(TensorLoan& loan) {
    void* mapping =
        ::mmap(nullptr, loan.size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, loan.fd_, 0);
    if (mapping == MAP_FAILED) {
      int error = errno;
      loan.reset();
      throw ConnectionError(std::string("cannot map a shared-memory loan: ") +
                            std::strerror(error));
    }
    loan.mapping_ = mapping;
    loan.data_ = static_cast<std::byte*>(mapping);
  }
  /// Unmaps the loan's region (the seal needs it) and forgets it; the descriptor stays.
  static void unmap(TensorLoan& loan) {
    if (loan.mapping_ != nullptr) ::munmap(loan.mapping_, loan.size());
    loan.mapping_ = nullptr;
    loan.data_ = nullptr;
  }
  /// Done with the loan: the server has it (committed) or never will.
  static void forget(TensorLoan& loan, bool give_back) {
    if (!give_back) loan.link_.reset();
    loan.reset();
  }

  static TensorView shared_view(DType dtype, std::vector<std::int64_t> shape, void* mapping,
                                std::size_t size, std::uint64_t id, std::uint64_t generation,
                                std::shared_ptr<ShmLink> link) {
    TensorView view;
    view.dtype_ = dtype;
    view.shape_ = std::move(shape);
    view.mapping_ = mapping;
    view.data_ = static_cast<const std::byte*>(mapping);
    view.size_ = size;
    view.id_ = id;
    view.generation_ = generation;
    view.link_ = std::move(link);
    return view;
  }
  static TensorView private_view(Tensor tensor) {
    TensorView view;
    view.dtype_ = tensor.dtype();
    view.shape_.assign(tensor.shape().begin(), tensor.shape().end());
    view.private_ = std::move(tensor);
    view.data_ = view.private_.bytes().data();
    view.size_ = view.private_.byte_size();
    return view;
  }
};

inline bool is_pool_full(const std::string& error) {
  return error.starts_with("SHMFULL") || error.starts_with("ERR shared memory is not attached");
}

// SS.SHM.VIEW ... ENCODED of a compressed tensor: its frame is fetched on the socket instead and
// decoded here.
inline bool is_compressed(const std::string& error) { return error.starts_with("ENCODED"); }

inline std::string quoted(std::string_view what, std::string_view key) {
  return std::string(what) + " '" + std::string(key) + "'";
}

// Maps a passed memfd read-only. Kernels before 6.7 refuse a shared mapping of a write-sealed
// memfd opened read-write; a private read-only mapping shows the same (unchangeable) pages.
inline void* map_read_only(int fd, std::size_t size) {
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED && (errno == EPERM || errno == EACCES)) {
    mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  return mapping;
}

inline void write_all(int fd, const std::byte* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw ConnectionError(std::string("writing a shared-memory loan failed: ") +
                            std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace client

using client::ShmAccess;
using client::is_compressed;
using client::is_pool_full;
using client::map_read_only;
using client::quoted;

// ---- TensorLoan / TensorView ------------------------------------------------------------------

TensorLoan::TensorLoan(TensorLoan&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      fd_(std::exchange(other.fd_, -1)),
      private_(std::move(other.private_)),
      id_(std::exchange(other.id_, 0)),
      generation_(other.generation_),
      link_(std::move(other.link_)) {}

TensorLoan& TensorLoan::operator=(TensorLoan&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    private_ = std::move(other.private_);
    id_ = std::exchange(other.id_, 0);
    generation_ = other.generation_;
    link_ = std::move(other.link_);
  }
  return *this;
}

TensorLoan::~TensorLoan() { reset(); }

void TensorLoan::reset() noexcept {
  if (mapping_ != nullptr) ::munmap(mapping_, size_);
  if (fd_ >= 0) ::close(fd_);
  if (link_ && id_ != 0) link_->give_back(generation_, id_);  // an uncommitted loan
  mapping_ = nullptr;
  fd_ = -1;
  data_ = nullptr;
  size_ = 0;
  id_ = 0;
  private_.reset();
  link_.reset();
}

TensorView::TensorView(TensorView&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      private_(std::move(other.private_)),
      id_(std::exchange(other.id_, 0)),
      generation_(other.generation_),
      link_(std::move(other.link_)) {}

TensorView& TensorView::operator=(TensorView&& other) noexcept {
  if (this != &other) {
    release();
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    private_ = std::move(other.private_);
    id_ = std::exchange(other.id_, 0);
    generation_ = other.generation_;
    link_ = std::move(other.link_);
  }
  return *this;
}

TensorView::~TensorView() { release(); }

void TensorView::release() noexcept {
  if (mapping_ != nullptr) ::munmap(mapping_, size_);
  if (link_ && id_ != 0) link_->give_back(generation_, id_);
  mapping_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  id_ = 0;
  link_.reset();
  private_ = Tensor();
}

void TensorView::throw_dtype_mismatch(DType requested) const {
  throw InvalidArgumentError("tensor view holds " + std::string(dtype_name(dtype_)) + ", not " +
                             std::string(dtype_name(requested)));
}

// ---- Impl: attach and releases -----------------------------------------------------------------

void Client::Impl::attach_shared_memory(client::Connection& connection) {
  bool with_shm = false;
  bool lend_ahead = false;
  if (shm_wanted_) {
    connection.set_io_timeout(options_.command_timeout);
    Request attach;
    attach.command({"SS.SHM.ATTACH"});
    attach.command({"SS.SHM.FEATURES"});  // same round trip; an older server answers an error
    connection.send(attach);
    // An error (plain Redis, --no-shm, ...) just means the socket path.
    with_shm = !connection.read_reply().is_error();
    Reply features = connection.read_reply();
    for (const Reply& feature : features.elements) {
      if (feature.is_string() && feature.string == "lend-ahead") lend_ahead = true;
    }
  }
  shm_->connected(with_shm);
  lend_ahead_offered_.store(with_shm && lend_ahead, std::memory_order_relaxed);
  drop_loans_ahead();  // lent on the connection this one replaces: the server let them go
}

void Client::Impl::attach_member_shared_memory(client::Connection& connection) {
  member_shm_ = false;
  if (!shm_wanted_ || nodes_[default_node_].address.kind != client::Address::Kind::kUnix) return;
  connection.set_io_timeout(options_.command_timeout);
  Request attach;
  attach.command({"SS.SHM.ATTACH"});
  connection.send(attach);
  member_shm_ = !connection.read_reply().is_error();  // an error: the socket it is
}

bool Client::Impl::send_shm_releases(client::Connection& connection) {
  std::vector<std::uint64_t> ids = shm_->take_pending();
  if (ids.empty()) return false;
  Request release;
  release.command(1 + ids.size());
  release.arg("SS.SHM.RELEASE");
  for (std::uint64_t id : ids) release.arg(static_cast<std::int64_t>(id));
  connection.send(release);
  return true;
}

// ---- Impl: loans --------------------------------------------------------------------------------

client::ShmLoanReply Client::Impl::read_loan(client::Connection& c) {
  client::ShmLoanReply result;
  Reply reply = c.read_reply();
  if (reply.is_error()) {
    result.error = reply.string;
  } else if (!reply.is_integer() || reply.integer <= 0) {
    c.protocol_error("SS.SHM.LOAN did not reply a loan id");
  } else {
    result.fd = c.take_fd();
    result.id = static_cast<std::uint64_t>(reply.integer);
    result.generation = shm_->current_generation();
  }
  return result;
}

std::optional<TensorLoan> Client::Impl::take_loan_ahead(std::size_t bytes) {
  const std::uint64_t generation = shm_->current_generation();
  std::vector<TensorLoan> unused;  // given back (destroyed) outside the lock
  std::optional<TensorLoan> found;
  {
    std::lock_guard lock(ahead_mutex_);
    const std::uint64_t now = ++loans_taken_;
    for (auto it = loans_ahead_.begin(); it != loans_ahead_.end();) {
      if (!found && it->loan.size() == bytes && ShmAccess::generation(it->loan) == generation) {
        found = std::move(it->loan);
        it = loans_ahead_.erase(it);
      } else if (ShmAccess::generation(it->loan) != generation ||
                 now - it->held_since > kLoanAheadUnusedFor) {
        unused.push_back(std::move(it->loan));  // a size not put again lately: give it back
        it = loans_ahead_.erase(it);
      } else {
        ++it;
      }
    }
  }
  return found;
}

bool Client::Impl::drop_loans_ahead() {
  std::vector<HeldLoan> dropped;  // given back (destroyed) outside the lock
  {
    std::lock_guard lock(ahead_mutex_);
    dropped.swap(loans_ahead_);
  }
  return !dropped.empty();
}

void Client::Impl::hold_loan_ahead(TensorLoan loan) {
  std::optional<TensorLoan> dropped;  // given back (destroyed) after the lock
  std::lock_guard lock(ahead_mutex_);
  if (loans_ahead_.size() >= kLoansAheadHeld) {
    dropped = std::move(loans_ahead_.front().loan);
    loans_ahead_.erase(loans_ahead_.begin());
  }
  loans_ahead_.push_back(HeldLoan{std::move(loan), loans_taken_});
}

std::optional<TensorLoan> Client::Impl::shm_lend(std::size_t bytes, bool map) {
  if (std::optional<TensorLoan> ahead = take_loan_ahead(bytes)) {
    if (map) ShmAccess::map_writable(*ahead);
    shm_->shm_lent_ahead_puts.fetch_add(1, std::memory_order_relaxed);
    return ahead;
  }
  Request request;
  request.command(2);
  request.arg("SS.SHM.LOAN");
  request.arg(static_cast<std::int64_t>(bytes));
  using Lent = client::ShmLoanReply;
  Lent lent = exchange(Route::any(), request, [&](client::Connection& c) { return read_loan(c); });
  if (!lent.error.empty() && (is_pool_full(lent.error) || lent.error.starts_with("OOM")) &&
      drop_loans_ahead()) {
    // The loans held for puts of other sizes give way (released in front of the retry).
    lent = exchange(Route::any(), request, [&](client::Connection& c) { return read_loan(c); });
  }
  if (!lent.error.empty()) {
    if (is_pool_full(lent.error)) return std::nullopt;
    client::throw_server_error(lent.error, "shared-memory loan of " + std::to_string(bytes) +
                                               " bytes");
  }
  TensorLoan loan;
  ShmAccess::set_shared(loan, nullptr, lent.fd, bytes, lent.id, lent.generation, shm_);
  if (map) ShmAccess::map_writable(loan);
  return loan;
}

void Client::Impl::add_commit(Request& request, std::uint64_t loan_id, std::string_view key,
                              DType dtype, std::span<const std::int64_t> shape, bool lend_next) {
  request.command(4 + shape.size() + (lend_next ? 1 : 0));
  request.arg("SS.SHM.COMMIT");
  request.arg(static_cast<std::int64_t>(loan_id));
  request.arg(key);
  request.arg(dtype_name(dtype));
  for (auto d : shape) request.arg(d);
  if (lend_next) request.arg("LEND");
}

Reply Client::Impl::read_commit(client::Connection& c, bool lend_next, std::size_t bytes,
                                std::optional<TensorLoan>& next) {
  Reply answer = c.read_reply();
  if (!lend_next || !answer.is_array()) return answer;  // an error: nothing was lent
  if (answer.elements.size() != 2 || !(answer.elements[1].is_nil() ||
                                       (answer.elements[1].is_integer() &&
                                        answer.elements[1].integer > 0))) {
    c.protocol_error("malformed SS.SHM.COMMIT ... LEND reply");
  }
  if (answer.elements[1].is_integer()) {
    next.emplace();
    ShmAccess::set_shared(*next, nullptr, c.take_fd(), bytes,
                          static_cast<std::uint64_t>(answer.elements[1].integer),
                          shm_->current_generation(), shm_);
  }
  return std::move(answer.elements[0]);
}

bool Client::Impl::shm_commit(const std::string& key, TensorLoan& loan, DType dtype,
                              std::span<const std::int64_t> shape) {
  ShmAccess::unmap(loan);  // the server can seal the loan only once nobody maps it writable
  const bool lend_next = lend_ahead();
  Request request;
  add_commit(request, ShmAccess::id(loan), key, dtype, shape, lend_next);
  std::optional<TensorLoan> next;  // lent ahead for the next put of this size
  Reply reply = exchange(Route(key), request, [&](client::Connection& c) {
    return read_commit(c, lend_next, loan.size(), next);
  });
  if (next) hold_loan_ahead(std::move(*next));
  if (reply.is_error() && reply.string.starts_with("ERR no such loan")) {
    // The connection was replaced since the loan was made (the server dropped it with the old
    // one): the bytes are still in our descriptor, so send them on the socket.
    void* mapping = map_read_only(ShmAccess::fd(loan), loan.size());
    if (mapping == MAP_FAILED) {
      ShmAccess::forget(loan, false);
      throw ConnectionError("put tensor '" + key + "': the loan outlived its connection");
    }
    Request put;
    add_tensor_set(put, key, TensorRef{key, dtype, mapping, loan.size(), shape, MemoryOrder::kC});
    try {
      call(Route(key), put, quoted("put tensor", key));
    } catch (...) {
      ::munmap(mapping, loan.size());
      ShmAccess::forget(loan, false);
      throw;
    }
    ::munmap(mapping, loan.size());
    ShmAccess::forget(loan, false);
    shm_->fallbacks.fetch_add(1, std::memory_order_relaxed);
    shm_->socket_puts.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ShmAccess::forget(loan, false);  // consumed by the server, whatever its answer
  if (reply.is_error()) client::throw_server_error(reply.string, quoted("put tensor", key));
  shm_->shm_puts.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Client::Impl::shm_put(const std::string& key, const TensorRef& t) {
  if (!shm_->active() || t.bytes < options_.shared_memory_min_bytes ||
      t.bytes < options_.shared_memory_put_min_bytes || t.compression != nullptr) {
    shm_->socket_puts.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::size_t expected = element_count(t.shape) * dtype_size(t.dtype);
  if (t.bytes != expected || (t.bytes > 0 && t.data == nullptr)) return false;  // socket path says why
  const bool transpose = t.order == MemoryOrder::kFortran && t.shape.size() > 1;
  std::optional<TensorLoan> loan = shm_lend(t.bytes, transpose);
  if (!loan) {
    shm_->fallbacks.fetch_add(1, std::memory_order_relaxed);
    shm_->socket_puts.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // The one copy: straight from the caller's buffer into the loan (pwrite needs no mapping, so
  // nothing has to be unmapped for the seal), or transposed into the mapped loan.
  if (transpose) {
    fortran_to_c(static_cast<const std::byte*>(t.data), loan->bytes().data(),
                         dtype_size(t.dtype), t.shape);
  } else {
    client::write_all(ShmAccess::fd(*loan), static_cast<const std::byte*>(t.data), t.bytes);
  }
  shm_commit(key, *loan, t.dtype, t.shape);
  return true;
}

// ---- Impl: views --------------------------------------------------------------------------------

client::ShmLeaseReply Client::Impl::read_lease(client::Connection& c) {
  client::ShmLeaseReply result;
  client::ShmLease& lease = result.lease;
  Reply reply = c.read_reply();
  if (reply.is_error()) {
    result.error = reply.string;
    return result;
  }
  // [id, type, [dims], bytes], with the memfd passed alongside.
  if (!reply.is_array() || reply.elements.size() != 4 || !reply.elements[0].is_integer() ||
      !reply.elements[2].is_array() || !reply.elements[3].is_integer()) {
    c.protocol_error("malformed SS.SHM.VIEW reply");
  }
  lease.fd = c.take_fd();
  lease.id = static_cast<std::uint64_t>(reply.elements[0].integer);
  lease.generation = shm_->current_generation();
  auto dtype = parse_dtype(reply.elements[1].string);
  std::size_t expected = 0;
  try {
    if (!dtype) throw InvalidArgumentError("unknown dtype");
    lease.dtype = *dtype;
    for (const auto& d : reply.elements[2].elements) lease.shape.push_back(d.integer);
    expected = element_count(lease.shape) * dtype_size(lease.dtype);
  } catch (const InvalidArgumentError& e) {
    ::close(lease.fd);
    c.protocol_error(std::string("SS.SHM.VIEW reply describes an invalid tensor: ") + e.what());
  }
  lease.bytes = static_cast<std::size_t>(reply.elements[3].integer);
  if (lease.bytes != expected) {
    ::close(lease.fd);
    c.protocol_error("SS.SHM.VIEW reply size does not match its shape");
  }
  return result;
}

std::optional<client::ShmLease> Client::Impl::shm_lease(const std::string& key, bool frames) {
  if (!shm_->active()) return std::nullopt;
  Request request;
  if (frames) {
    request.command({"SS.SHM.VIEW", key, "ENCODED"});
  } else {
    request.command({"SS.SHM.VIEW", key});
  }
  client::ShmLeaseReply leased =
      exchange(Route(key), request, [&](client::Connection& c) { return read_lease(c); });
  if (!leased.error.empty()) {
    if (is_pool_full(leased.error)) {
      shm_->fallbacks.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    if (frames && is_compressed(leased.error)) return std::nullopt;
    client::throw_server_error(leased.error, quoted("view tensor", key));
  }
  return std::move(leased.lease);
}

TensorView Client::Impl::map_lease(client::ShmLease& lease) {
  void* mapping = client::map_read_only(lease.fd, lease.bytes);
  int error = errno;
  ::close(lease.fd);  // the mapping keeps the memory
  lease.fd = -1;
  if (mapping == MAP_FAILED) {
    shm_->give_back(lease.generation, lease.id);
    throw ConnectionError(std::string("cannot map a shared-memory view: ") + std::strerror(error));
  }
  return ShmAccess::shared_view(lease.dtype, std::move(lease.shape), mapping, lease.bytes,
                                lease.id, lease.generation, shm_);
}

std::optional<TensorView> Client::Impl::shm_view(const std::string& key) {
  std::optional<client::ShmLease> lease = shm_lease(key, false);
  if (!lease) return std::nullopt;
  return map_lease(*lease);
}

void Client::Impl::shm_read(client::ShmLease& lease, std::byte* out) {
  // pread copies through the kernel's own mapping of the pages: no mapping to make, fault in and
  // tear down here, which costs more than the copy itself (docs/performance.md).
  std::size_t done = 0;
  int error = 0;
  while (done < lease.bytes) {
    ssize_t n = ::pread(lease.fd, out + done, lease.bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(lease.fd);
  lease.fd = -1;
  shm_->give_back(lease.generation, lease.id);  // released with the next request
  if (error != 0) {
    throw ConnectionError(std::string("reading shared memory failed: ") + std::strerror(error));
  }
}

std::optional<Tensor> Client::Impl::shm_get(const std::string& key) {
  std::optional<client::ShmLease> lease = shm_lease(key, true);
  if (!lease) {
    shm_->socket_gets.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  Tensor tensor = Tensor::uninitialized(lease->dtype, lease->shape);
  shm_read(*lease, tensor.mutable_bytes().data());
  shm_->shm_gets.fetch_add(1, std::memory_order_relaxed);
  return tensor;
}

std::optional<std::vector<std::int64_t>> Client::Impl::shm_unpack(
    const std::string& key, DType dtype, void* out, std::size_t out_bytes,
    std::span<const std::int64_t> expected, MemoryOrder order) {
  std::optional<client::ShmLease> lease;
  if (out_bytes >= options_.shared_memory_min_bytes) lease = shm_lease(key, true);
  if (!lease) {
    shm_->socket_gets.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  // Checked before anything is copied; the lease goes back whatever happens.
  std::vector<std::int64_t> shape = lease->shape;
  auto refuse = [&](auto&& error) {
    ::close(lease->fd);
    shm_->give_back(lease->generation, lease->id);
    throw error;
  };
  if (lease->dtype != dtype) {
    refuse(InvalidArgumentError("tensor '" + key + "' holds " +
                                std::string(dtype_name(lease->dtype)) + " elements, not " +
                                std::string(dtype_name(dtype))));
  }
  if (!expected.empty() &&
      !std::equal(expected.begin(), expected.end(), shape.begin(), shape.end())) {
    refuse(shape_mismatch_error(key, shape, expected));
  }
  if (out_bytes < lease->bytes) {
    refuse(BufferTooSmallError("tensor '" + key + "' needs " + std::to_string(lease->bytes) +
                               " bytes; the buffer has " + std::to_string(out_bytes)));
  }
  if (order == MemoryOrder::kFortran && shape.size() > 1) {
    TensorView view = map_lease(*lease);
    c_to_fortran(view.bytes().data(), static_cast<std::byte*>(out), dtype_size(dtype), shape);
  } else {
    shm_read(*lease, static_cast<std::byte*>(out));
  }
  shm_->shm_gets.fetch_add(1, std::memory_order_relaxed);
  return shape;
}

// ---- Impl: batches -------------------------------------------------------------------------------

namespace {
bool put_through_shared_memory(const TensorRef& t, const ClientOptions& options) {
  if (t.bytes < options.shared_memory_min_bytes || t.bytes < options.shared_memory_put_min_bytes ||
      t.bytes == 0 || t.data == nullptr || t.compression != nullptr) {
    return false;
  }
  return t.bytes == element_count(t.shape) * dtype_size(t.dtype);
}
}  // namespace

bool Client::Impl::shm_put_batch_applies(std::span<const TensorRef> tensors) const {
  if (clustered_ || !shm_->active()) return false;
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const TensorRef& t) { return put_through_shared_memory(t, options_); });
}

bool Client::Impl::shm_put_batch(std::span<const std::string> keys,
                                 std::span<const TensorRef> tensors) {
  if (clustered_ || !shm_->active()) return false;
  const std::size_t count = tensors.size();
  std::vector<std::size_t> loaned;  // the tensors that go through shared memory
  for (std::size_t i = 0; i < count; ++i) {
    if (put_through_shared_memory(tensors[i], options_)) loaned.push_back(i);
  }
  if (loaned.empty()) return false;

  // Round trip 1: a loan for each that has none held ahead (none at all when every tensor has
  // one: a dataset put step after step). A loan the pool cannot give sends its tensor on the
  // socket.
  std::vector<TensorLoan> loans(count);  // given back by their destructors if anything throws
  auto lent = [&](std::size_t i) { return ShmAccess::id(loans[i]) != 0; };  // not mapped: no data()
  std::vector<std::string> errors(count);
  std::vector<std::size_t> asked;
  for (std::size_t i : loaned) {
    if (std::optional<TensorLoan> ahead = take_loan_ahead(tensors[i].bytes)) {
      loans[i] = std::move(*ahead);
      shm_->shm_lent_ahead_puts.fetch_add(1, std::memory_order_relaxed);
    } else {
      asked.push_back(i);
    }
  }
  // Asks for the loans of `which`; returns those refused for want of room (-SHMFULL, -OOM).
  auto ask = [&](const std::vector<std::size_t>& which) {
    std::vector<std::size_t> short_of_room;
    if (which.empty()) return short_of_room;
    Request lend;
    for (std::size_t i : which) {
      lend.command(2);
      lend.arg("SS.SHM.LOAN");
      lend.arg(static_cast<std::int64_t>(tensors[i].bytes));
    }
    exchange(Route::any(), lend, [&](client::Connection& c) {
      for (std::size_t i : which) {
        client::ShmLoanReply reply = read_loan(c);
        if (!reply.error.empty()) {
          if (is_pool_full(reply.error) || reply.error.starts_with("OOM")) {
            short_of_room.push_back(i);
          }
          errors[i] = std::move(reply.error);
          continue;
        }
        ShmAccess::set_shared(loans[i], nullptr, reply.fd, tensors[i].bytes, reply.id,
                              reply.generation, shm_);
      }
    });
    return short_of_room;
  };
  std::vector<std::size_t> refused = ask(asked);
  if (!refused.empty() && drop_loans_ahead()) {
    // The loans held for later puts give way (released in front of the retry).
    for (std::size_t i : refused) errors[i].clear();
    refused = ask(refused);
  }
  for (std::size_t i : refused) {
    if (!is_pool_full(errors[i])) continue;  // -OOM stays this tensor's error
    errors[i].clear();                       // a full pool sends it on the socket
    shm_->fallbacks.fetch_add(1, std::memory_order_relaxed);
  }

  // The one copy of each, straight into its loan (pwrite needs no mapping, so nothing is left
  // mapped writable for the seal), or transposed through a mapping that is gone before commit.
  for (std::size_t i : loaned) {
    if (!lent(i)) continue;
    const TensorRef& t = tensors[i];
    const int fd = ShmAccess::fd(loans[i]);
    if (t.order == MemoryOrder::kFortran && t.shape.size() > 1) {
      void* mapping = ::mmap(nullptr, t.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                             fd, 0);
      if (mapping == MAP_FAILED) {
        throw ConnectionError(std::string("cannot map a shared-memory loan: ") +
                              std::strerror(errno));
      }
      fortran_to_c(static_cast<const std::byte*>(t.data), static_cast<std::byte*>(mapping),
                   dtype_size(t.dtype), t.shape);
      ::munmap(mapping, t.bytes);
    } else {
      client::write_all(fd, static_cast<const std::byte*>(t.data), t.bytes);
    }
  }

  // Round trip 2: the commits, and every other tensor on the socket, in the callers' order.
  const bool lend_next = lend_ahead();
  Request put;
  std::vector<std::size_t> sent;
  for (std::size_t i = 0; i < count; ++i) {
    if (!errors[i].empty()) continue;
    sent.push_back(i);
    if (!lent(i)) {
      add_tensor_set(put, keys[i], tensors[i]);
      continue;
    }
    add_commit(put, ShmAccess::id(loans[i]), keys[i], tensors[i].dtype, tensors[i].shape,
               lend_next);
  }
  std::vector<std::size_t> resend;  // loans whose connection was replaced in between
  std::vector<TensorLoan> lent_ahead;  // for the next batch
  if (!sent.empty()) {
    exchange(Route::any(), put, [&](client::Connection& c) {
      for (std::size_t i : sent) {
        const bool shared = lent(i);
        std::optional<TensorLoan> next;
        Reply reply = shared ? read_commit(c, lend_next, tensors[i].bytes, next) : c.read_reply();
        if (next) lent_ahead.push_back(std::move(*next));
        if (shared) ShmAccess::forget(loans[i], false);  // consumed, whatever the answer
        if (shared && reply.is_error() && reply.string.starts_with("ERR no such loan")) {
          resend.push_back(i);
        } else if (reply.is_error()) {
          errors[i] = reply.string;
        } else {
          (shared ? shm_->shm_puts : shm_->socket_puts).fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (TensorLoan& next : lent_ahead) hold_loan_ahead(std::move(next));
  if (!resend.empty()) {
    Request again;
    for (std::size_t i : resend) add_tensor_set(again, keys[i], tensors[i]);
    exchange(Route::any(), again, [&](client::Connection& c) {
      for (std::size_t i : resend) {
        Reply reply = c.read_reply();
        if (reply.is_error()) errors[i] = reply.string;
        shm_->fallbacks.fetch_add(1, std::memory_order_relaxed);
        shm_->socket_puts.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!errors[i].empty()) client::throw_server_error(errors[i], quoted("put tensor", keys[i]));
  }
  return true;
}

bool Client::Impl::shm_get_batch(std::span<const std::string> keys, std::vector<Tensor>& out) {
  if (clustered_ || !shm_->active() || keys.empty()) return false;
  Request request;
  for (const std::string& key : keys) request.command({"SS.SHM.VIEW", key, "ENCODED"});
  std::vector<client::ShmLeaseReply> leased;
  // Leases are closed and given back however this ends.
  auto give_back_from = [&](std::size_t first) {
    for (std::size_t i = first; i < leased.size(); ++i) {
      if (!leased[i].error.empty() || leased[i].lease.fd < 0) continue;
      ::close(leased[i].lease.fd);
      leased[i].lease.fd = -1;
      shm_->give_back(leased[i].lease.generation, leased[i].lease.id);
    }
  };
  try {
    exchange(Route::any(), request, [&](client::Connection& c) {
      for (std::size_t i = 0; i < keys.size(); ++i) leased.push_back(read_lease(c));
    });
  } catch (...) {
    give_back_from(0);
    throw;
  }
  std::vector<std::size_t> socket;  // leases the pool could not give: read on the socket
  std::size_t failed = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    client::ShmLeaseReply& reply = leased[i];
    if (!reply.error.empty()) {
      if (is_pool_full(reply.error)) {
        shm_->fallbacks.fetch_add(1, std::memory_order_relaxed);
        socket.push_back(i);
      } else if (is_compressed(reply.error)) {
        socket.push_back(i);
      } else if (failed == keys.size()) {
        failed = i;
      }
      continue;
    }
    try {
      out[i] = Tensor::uninitialized(reply.lease.dtype, reply.lease.shape);
      shm_read(reply.lease, out[i].mutable_bytes().data());
    } catch (...) {
      give_back_from(i);
      throw;
    }
    shm_->shm_gets.fetch_add(1, std::memory_order_relaxed);
  }
  if (!socket.empty()) {
    Request get;
    for (std::size_t i : socket) add_tensor_get(get, keys[i]);
    exchange(Route::any(), get, [&](client::Connection& c) {
      for (std::size_t i : socket) out[i] = read_tensor(c, keys[i]);
    });
    shm_->socket_gets.fetch_add(socket.size(), std::memory_order_relaxed);
  }
  if (failed < keys.size()) {
    client::throw_server_error(leased[failed].error, quoted("get tensor", keys[failed]));
  }
  return true;
}

// ---- Client -------------------------------------------------------------------------------------

TensorLoan Client::loan(std::size_t bytes) {
  if (bytes == 0) throw InvalidArgumentError("a loan needs at least one byte");
  if (impl_->shm_link().active()) {
    if (std::optional<TensorLoan> lent = impl_->shm_lend(bytes, true)) return std::move(*lent);
    impl_->shm_link().fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  TensorLoan loan;
  ShmAccess::set_private(loan, bytes);
  return loan;
}

void Client::put_tensor(std::string_view name, TensorLoan&& loan, DType dtype,
                        std::span<const std::int64_t> shape) {
  TensorLoan taken = std::move(loan);  // consumed whatever happens
  if (!taken.valid()) {
    throw InvalidArgumentError("put tensor: the loan is empty (moved from or already committed)");
  }
  std::string key = impl_->tensor_key(name, false);
  std::size_t expected = element_count(shape) * dtype_size(dtype);
  if (taken.size() != expected) {
    throw InvalidArgumentError("tensor '" + key + "': the loan is " +
                               std::to_string(taken.size()) + " bytes but the shape needs " +
                               std::to_string(expected));
  }
  client::ShmLink& link = impl_->shm_link();
  if (taken.shared()) {
    if (impl_->shm_commit(key, taken, dtype, shape)) {
      link.shm_loan_puts.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  Request request;
  Impl::add_tensor_set(request, key,
                       TensorRef{key, dtype, taken.bytes().data(), taken.size(), shape});
  impl_->call(Route(key), request, "put tensor '" + key + "'");
  link.socket_puts.fetch_add(1, std::memory_order_relaxed);
}

TensorView Client::view_tensor(std::string_view name) {
  std::string key = impl_->tensor_key(name, true);
  if (std::optional<TensorView> view = impl_->shm_view(key)) {
    impl_->shm_link().shm_views.fetch_add(1, std::memory_order_relaxed);
    return std::move(*view);
  }
  Request request;
  Impl::add_tensor_get(request, key);
  Tensor tensor =
      impl_->exchange(Route(key), request,
                      [&](client::Connection& c) { return Impl::read_tensor(c, key); });
  impl_->shm_link().socket_gets.fetch_add(1, std::memory_order_relaxed);
  return ShmAccess::private_view(std::move(tensor));
}

ClientStats Client::stats() const {
  const client::ShmLink& link = impl_->shm_link();
  ClientStats stats;
  stats.shared_memory = link.active();
  stats.shm_puts = link.shm_puts.load();
  stats.shm_loan_puts = link.shm_loan_puts.load();
  stats.shm_lent_ahead_puts = link.shm_lent_ahead_puts.load();
  stats.shm_gets = link.shm_gets.load();
  stats.shm_views = link.shm_views.load();
  stats.socket_puts = link.socket_puts.load();
  stats.socket_gets = link.socket_gets.load();
  stats.fallbacks = link.fallbacks.load();
  return stats;
}

}  // namespace slipstream
