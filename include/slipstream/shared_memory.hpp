// The shared-memory fast path, client side: `TensorLoan` (a region to fill and then store with
// Client::put_tensor, no copy) and `TensorView` (a read-only view of a stored tensor, no copy),
// plus the figures a Client keeps about which path each operation took.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "slipstream/error.hpp"
#include "slipstream/export.hpp"
#include "slipstream/tensor.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream {

namespace client {
struct ShmLink;
struct ShmAccess;
}

/// Whether a Client moves tensor bytes through shared memory (ClientOptions::shared_memory).
enum class SharedMemoryMode : std::uint8_t {
  /// Over a `unix://` address, ask the server for shared memory after connecting (and after AUTH)
  /// and use it when it agrees; otherwise, and over TCP, use the socket.
  kAuto,
  /// Always use the socket.
  kOff,
};

/// Which path a Client's tensor operations took (Client::stats()). Counts since construction.
struct ClientStats {
  bool shared_memory = false;      ///< the current connection has the fast path
  std::uint64_t shm_puts = 0;      ///< puts through shared memory (one copy, or none for a loan)
  std::uint64_t shm_loan_puts = 0; ///< of shm_puts: loans committed without a copy
  /// Loans (for puts, or from Client::loan) taken from those lent ahead with the commit of an
  /// earlier put of that size, instead of asked for with an SS.SHM.LOAN round trip
  /// (ClientOptions::shared_memory_lend_ahead).
  std::uint64_t shm_lent_ahead_puts = 0;
  std::uint64_t shm_gets = 0;      ///< get_tensor / unpack_tensor through shared memory (one copy)
  std::uint64_t shm_views = 0;     ///< view_tensor through shared memory (no copy)
  std::uint64_t socket_puts = 0;   ///< tensors sent on the socket
  std::uint64_t socket_gets = 0;   ///< tensors received on the socket (views included)
  /// Operations that wanted shared memory but used the socket because the server's pool was
  /// full (or a loan outlived its connection).
  std::uint64_t fallbacks = 0;
};

/// A writable region to fill with a tensor's bytes (row-major) and then store with
/// Client::put_tensor(name, std::move(loan), dtype, shape), which commits it without a copy.
/// From Client::loan(). When the fast path is not available (TCP, a full pool) the loan is private
/// memory and the put sends it on the socket: code using loans works everywhere.
///
/// Move-only. Not synchronised: fill it from one thread at a time. A loan not committed is given
/// back when destroyed. It stays usable after its Client is destroyed, but can then only be
/// dropped.
class SLIPSTREAM_API TensorLoan {
 public:
  TensorLoan() = default;
  TensorLoan(TensorLoan&& other) noexcept;
  TensorLoan& operator=(TensorLoan&& other) noexcept;
  TensorLoan(const TensorLoan&) = delete;
  TensorLoan& operator=(const TensorLoan&) = delete;
  ~TensorLoan();

  /// The region (empty once committed or moved from).
  std::span<std::byte> bytes() const noexcept { return {data_, size_}; }
  /// The region as elements of T (size() / sizeof(T) of them).
  template <typename T>
  std::span<T> as() const noexcept {
    return {reinterpret_cast<T*>(data_), size_ / sizeof(T)};
  }
  std::size_t size() const noexcept { return size_; }
  bool valid() const noexcept { return data_ != nullptr; }
  /// True when the region is shared memory the server lent (the put will not copy it).
  bool shared() const noexcept { return mapping_ != nullptr; }

 private:
  friend struct client::ShmAccess;
  void reset() noexcept;

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  void* mapping_ = nullptr;  // the shared mapping, or null for private memory
  int fd_ = -1;              // the loan's memfd while shared (kept to recover from a reconnect)
  std::unique_ptr<std::byte[]> private_;
  std::uint64_t id_ = 0;
  std::uint64_t generation_ = 0;
  std::shared_ptr<client::ShmLink> link_;
};

/// A read-only view of a stored tensor's bytes, from Client::view_tensor(). Through shared
/// memory it is the server's copy itself, mapped read-only: no byte is copied, and the bytes stay
/// exactly as they were when viewed until release(), even if the key is overwritten or deleted
/// meanwhile. Without the fast path the view holds a private copy received on the socket.
///
/// Move-only. A const view may be read from any number of threads. Valid until release() or
/// destruction, even after its Client is destroyed.
class SLIPSTREAM_API TensorView {
 public:
  TensorView() = default;
  TensorView(TensorView&& other) noexcept;
  TensorView& operator=(TensorView&& other) noexcept;
  TensorView(const TensorView&) = delete;
  TensorView& operator=(const TensorView&) = delete;
  ~TensorView();

  DType dtype() const noexcept { return dtype_; }
  std::span<const std::int64_t> shape() const noexcept { return shape_; }
  /// Row-major bytes (empty after release()).
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  std::size_t byte_size() const noexcept { return size_; }
  /// Number of elements.
  std::size_t size() const noexcept { return size_ / dtype_size(dtype_); }
  /// The elements. Throws InvalidArgumentError if T is not the tensor's dtype.
  template <typename T>
  std::span<const T> data() const {
    if (dtype_of<T> != dtype_) throw_dtype_mismatch(dtype_of<T>);
    return {reinterpret_cast<const T*>(data_), size()};
  }
  bool valid() const noexcept { return data_ != nullptr; }
  /// True when the bytes are the server's shared memory (no copy was made).
  bool shared() const noexcept { return mapping_ != nullptr; }
  /// Gives the bytes back (the server may then free them). Idempotent.
  void release() noexcept;

 private:
  friend struct client::ShmAccess;
  [[noreturn]] void throw_dtype_mismatch(DType requested) const;

  DType dtype_ = DType::kFloat32;
  std::vector<std::int64_t> shape_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  void* mapping_ = nullptr;  // shared mapping of size_ bytes, or null
  Tensor private_;           // the socket fallback's copy
  std::uint64_t id_ = 0;
  std::uint64_t generation_ = 0;
  std::shared_ptr<client::ShmLink> link_;
};

}  // namespace slipstream
