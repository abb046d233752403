// The shared-memory fast path against a real server: every dtype through put/get/view/unpack and
// loans, views that outlive overwrites and deletes, a SIGKILLed client's views and loans
// reclaimed, a full pool falling back to the socket, --maxmemory, AUTH before attach, and
// another local user kept out.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <functional>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "client_fixture.hpp"
#include "support/scripted_server.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

ClientOptions shm_options(const ServerProcess& server, std::size_t min_bytes = 0) {
  ClientOptions options;
  options.address = server.unix_address();
  options.shared_memory_min_bytes = min_bytes;
  options.shared_memory_put_min_bytes = min_bytes;
  return options;
}

/// Polls until INFO `field` equals `value` (reclaiming after a disconnect is asynchronous), for
/// up to 30 s: a loaded machine, or a sanitizer build, may take seconds.
bool eventually_equals(Client& client, const std::string& field, std::int64_t value) {
  for (int i = 0; i < 3000; ++i) {
    if (info_field(client, field) == value) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

template <typename T>
std::vector<T> sample(std::size_t n) {
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<T>((i * 37 + 11) % 101);
  return values;
}

template <typename T>
void round_trip(Client& shm, Client& tcp, const std::string& name) {
  const std::vector<std::int64_t> shape{3, 4, 5};
  std::unique_ptr<T[]> values(new T[60]);
  auto filled = sample<T>(60);
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t i = 0; i < 60; ++i) values[i] = i % 3 == 0;
  } else {
    std::copy(filled.begin(), filled.end(), values.get());
  }
  const std::size_t bytes = 60 * sizeof(T);

  // put (one copy into a loan) -> the same bytes are visible over TCP
  shm.put_tensor<T>(name, std::span<const T>(values.get(), 60), shape);
  Tensor via_tcp = tcp.get_tensor(name);
  ASSERT_EQ(via_tcp.dtype(), dtype_of<T>);
  ASSERT_EQ(std::memcmp(via_tcp.bytes().data(), values.get(), bytes), 0);

  // get, unpack, view
  Tensor got = shm.get_tensor(name);
  EXPECT_EQ(got.dtype(), dtype_of<T>);
  EXPECT_EQ(std::vector<std::int64_t>(got.shape().begin(), got.shape().end()), shape);
  EXPECT_EQ(std::memcmp(got.bytes().data(), values.get(), bytes), 0);
  std::unique_ptr<T[]> out(new T[60]{});
  EXPECT_EQ(shm.unpack_tensor<T>(name, std::span<T>(out.get(), 60), shape), shape);
  EXPECT_EQ(std::memcmp(out.get(), values.get(), bytes), 0);
  TensorView view = shm.view_tensor(name);
  EXPECT_TRUE(view.shared());
  EXPECT_EQ(view.dtype(), dtype_of<T>);
  EXPECT_EQ(std::vector<std::int64_t>(view.shape().begin(), view.shape().end()), shape);
  ASSERT_EQ(view.data<T>().size(), 60u);
  EXPECT_EQ(std::memcmp(view.data<T>().data(), values.get(), bytes), 0);

  // a loan filled in place, committed without a copy, read over TCP
  TensorLoan loan = shm.loan(bytes);
  ASSERT_TRUE(loan.shared());
  std::memcpy(loan.bytes().data(), values.get(), bytes);
  shm.put_tensor(name + ".loan", std::move(loan), dtype_of<T>, shape);
  EXPECT_FALSE(loan.valid());
  Tensor loaned = tcp.get_tensor(name + ".loan");
  EXPECT_EQ(std::memcmp(loaned.bytes().data(), values.get(), bytes), 0);
}

/// Runs `body` in a child process. `body` sets up what it holds (loans, views) and calls
/// ready(verdict), which reports the verdict through a pipe and waits, inside body's frame, to be
/// killed. Returns the child's pid once it has reported; the verdict must be true.
pid_t fork_holder(const std::function<void(const std::function<void(bool)>&)>& body) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    auto report = [&](bool ok) {
      char verdict = ok ? 'y' : 'n';
      if (::write(ready[1], &verdict, 1) != 1) ::_exit(2);
      ::pause();
    };
    try {
      body(report);
    } catch (...) {
    }
    report(false);
    ::_exit(1);
  }
  ::close(ready[1]);
  char verdict = 0;
  const bool reported = ::read(ready[0], &verdict, 1) == 1;
  ::close(ready[0]);
  EXPECT_TRUE(reported && verdict == 'y');
  return child;
}

/// Kills a holder and waits for it.
void kill_holder(pid_t child) {
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
}

class ShmTest : public ::testing::Test {
 protected:
  ServerProcess& server() { return shared_server(); }
};

TEST_F(ShmTest, EveryDtypeThroughSharedMemory) {
  Client shm(shm_options(server()));
  Client tcp(server().tcp_address());
  ASSERT_TRUE(shm.stats().shared_memory);
  EXPECT_FALSE(tcp.stats().shared_memory);
  round_trip<float>(shm, tcp, unique("f32"));
  round_trip<double>(shm, tcp, unique("f64"));
  round_trip<std::int8_t>(shm, tcp, unique("i8"));
  round_trip<std::int16_t>(shm, tcp, unique("i16"));
  round_trip<std::int32_t>(shm, tcp, unique("i32"));
  round_trip<std::int64_t>(shm, tcp, unique("i64"));
  round_trip<std::uint8_t>(shm, tcp, unique("u8"));
  round_trip<std::uint16_t>(shm, tcp, unique("u16"));
  round_trip<bool>(shm, tcp, unique("bool"));
  ClientStats stats = shm.stats();
  EXPECT_EQ(stats.shm_puts, 18u);  // 9 copies + 9 loans
  EXPECT_EQ(stats.shm_loan_puts, 9u);
  EXPECT_EQ(stats.shm_gets, 18u);  // get + unpack
  EXPECT_EQ(stats.shm_views, 9u);
  EXPECT_EQ(stats.socket_puts, 0u);
  EXPECT_EQ(stats.socket_gets, 0u);
  EXPECT_EQ(stats.fallbacks, 0u);
}

TEST_F(ShmTest, FortranOrderThroughSharedMemory) {
  Client shm(shm_options(server()));
  const std::vector<std::int64_t> shape{3, 4, 2};
  std::vector<double> fortran(24);
  std::iota(fortran.begin(), fortran.end(), 1.0);
  shm.put_tensor<double>(unique("f"), fortran, shape, MemoryOrder::kFortran);
  Client tcp(server().tcp_address());
  std::vector<double> back(24);
  tcp.unpack_tensor<double>(unique("f"), back, shape, MemoryOrder::kFortran);
  EXPECT_EQ(back, fortran);
  std::vector<double> via_shm(24);
  shm.unpack_tensor<double>(unique("f"), via_shm, shape, MemoryOrder::kFortran);
  EXPECT_EQ(via_shm, fortran);
  EXPECT_EQ(shm.stats().shm_puts, 1u);
  EXPECT_EQ(shm.stats().shm_gets, 1u);
}

// A committed tensor never changes under a reader: the view keeps the old bytes through an
// overwrite (through shared memory and through the socket) and a delete of its key.
TEST_F(ShmTest, ViewOutlivesOverwriteAndDelete) {
  Client shm(shm_options(server()));
  Client tcp(server().tcp_address());
  const std::vector<std::int64_t> shape{1024};
  std::vector<float> first(1024), second(1024, -1.0f);
  std::iota(first.begin(), first.end(), 0.0f);
  shm.put_tensor<float>(unique("t"), first, shape);

  TensorView view = shm.view_tensor(unique("t"));
  ASSERT_TRUE(view.shared());
  const std::int64_t leases = info_field(tcp, "shm_leases");
  EXPECT_GE(leases, 1);

  shm.put_tensor<float>(unique("t"), second, shape);  // overwrite through shared memory
  EXPECT_TRUE(std::equal(first.begin(), first.end(), view.data<float>().begin()));
  tcp.put_tensor<float>(unique("t"), second, shape);  // and through the socket
  EXPECT_TRUE(std::equal(first.begin(), first.end(), view.data<float>().begin()));
  EXPECT_TRUE(shm.delete_tensor(unique("t")));
  EXPECT_FALSE(tcp.tensor_exists(unique("t")));
  EXPECT_TRUE(std::equal(first.begin(), first.end(), view.data<float>().begin()));

  TensorView moved = std::move(view);
  EXPECT_FALSE(view.valid());
  moved.release();
  EXPECT_FALSE(moved.valid());
  shm.command({"PING"});  // the release rides on the next request
  EXPECT_EQ(info_field(tcp, "shm_leases"), leases - 1);
}

// The run path: an input committed from a loan (no copy), run on the server (the executor reads
// it in place), and the output read through a view. Outputs of 64 KiB and more are stored in
// shared memory by the executor, so the view is not a copy (shm_view_copies does not move).
TEST_F(ShmTest, RunInputsFromALoanAndOutputsThroughAView) {
  Client shm(shm_options(server()));
  Client tcp(server().tcp_address());
  const std::int64_t n = 32768;  // 128 KiB of FLOAT
  const std::vector<std::int64_t> shape{n};
  TensorLoan loan = shm.loan(static_cast<std::size_t>(n) * sizeof(float));
  ASSERT_TRUE(loan.shared());
  std::span<float> in = loan.as<float>();
  for (std::int64_t i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(i);
  shm.put_tensor(unique("in"), std::move(loan), DType::kFloat32, shape);
  shm.set_script(unique("s"), "CPU", "def twice(a):\n    return a * 2.0 + 1.0\n");
  const std::int64_t copies = info_field(tcp, "shm_view_copies");
  shm.run_script(unique("s"), "twice", {unique("in")}, {unique("out")});
  TensorView out = shm.view_tensor(unique("out"));
  ASSERT_TRUE(out.shared());
  ASSERT_EQ(out.shape().size(), 1u);
  EXPECT_EQ(out.shape()[0], n);
  std::span<const float> values = out.data<float>();
  for (std::int64_t i = 0; i < n; i += 997) {
    EXPECT_EQ(values[static_cast<std::size_t>(i)], 2.0f * static_cast<float>(i) + 1.0f) << i;
  }
  EXPECT_EQ(info_field(tcp, "shm_view_copies"), copies);  // the output was viewed in place
  ClientStats stats = shm.stats();
  EXPECT_EQ(stats.shm_loan_puts, 1u);
  EXPECT_EQ(stats.shm_views, 1u);
}

// A tensor stored through the socket is viewed through a copy the lease alone holds.
TEST_F(ShmTest, ViewOfSocketStoredTensorIsACopy) {
  Client shm(shm_options(server()));
  Client tcp(server().tcp_address());
  std::vector<std::int32_t> values(1000);
  std::iota(values.begin(), values.end(), 7);
  tcp.put_tensor<std::int32_t>(unique("t"), values, std::vector<std::int64_t>{10, 100});
  const std::int64_t copies = info_field(tcp, "shm_view_copies");
  TensorView view = shm.view_tensor(unique("t"));
  EXPECT_TRUE(view.shared());
  EXPECT_TRUE(std::equal(values.begin(), values.end(), view.data<std::int32_t>().begin()));
  EXPECT_EQ(info_field(tcp, "shm_view_copies"), copies + 1);
  EXPECT_THROW(view.data<float>(), InvalidArgumentError);

  // The copy became the key's storage: later views and unpacks of the value copy nothing, the
  // key's type, shape and bytes are unchanged on the socket, and a socket write starts over.
  const std::int64_t views = info_field(tcp, "shm_views");
  TensorView again = shm.view_tensor(unique("t"));
  EXPECT_TRUE(std::equal(values.begin(), values.end(), again.data<std::int32_t>().begin()));
  std::vector<std::int32_t> out(1000);
  shm.unpack_tensor<std::int32_t>(unique("t"), out);
  EXPECT_EQ(out, values);
  EXPECT_EQ(info_field(tcp, "shm_view_copies"), copies + 1);
  EXPECT_EQ(info_field(tcp, "shm_views"), views + 2);
  Tensor via_tcp = tcp.get_tensor(unique("t"));
  EXPECT_EQ(std::vector<std::int64_t>(via_tcp.shape().begin(), via_tcp.shape().end()),
            (std::vector<std::int64_t>{10, 100}));
  EXPECT_EQ(std::memcmp(via_tcp.bytes().data(), values.data(), 4000), 0);
  values[3] = -1;
  tcp.put_tensor<std::int32_t>(unique("t"), values, std::vector<std::int64_t>{10, 100});
  TensorView fresh = shm.view_tensor(unique("t"));
  EXPECT_EQ(fresh.data<std::int32_t>()[3], -1);
  EXPECT_EQ(again.data<std::int32_t>()[3], 10);  // the earlier view keeps its bytes
  EXPECT_EQ(info_field(tcp, "shm_view_copies"), copies + 2);
}

// put_tensors / get_tensors: the large tensors through shared memory (all loans in one round
// trip, all commits in another), the small ones on the socket, in one batch; a Fortran-order
// tensor transposed into its loan; a missing key fails the batch after the rest is read.
TEST_F(ShmTest, BatchesUseSharedMemory) {
  ClientOptions options = shm_options(server(), 64 << 10);
  Client shm(options);
  Client tcp(server().tcp_address());
  const std::vector<std::int64_t> big_shape{256, 128}, small_shape{10};
  std::vector<double> a(256 * 128), b(256 * 128), small(10);
  std::iota(a.begin(), a.end(), 0.5);
  std::iota(b.begin(), b.end(), -3.0);
  std::iota(small.begin(), small.end(), 100.0);
  const std::string ka = unique("batch.a"), kb = unique("batch.b"), ks = unique("batch.s");
  const std::vector<TensorRef> refs{
      TensorRef::of<double>(ka, a, big_shape),
      TensorRef::of<double>(ks, small, small_shape),
      TensorRef::of<double>(kb, b, big_shape, MemoryOrder::kFortran)};
  const ClientStats before = shm.stats();
  shm.put_tensors(refs);
  ClientStats after = shm.stats();
  EXPECT_EQ(after.shm_puts - before.shm_puts, 2u);
  EXPECT_EQ(after.socket_puts - before.socket_puts, 1u);
  EXPECT_EQ(after.fallbacks, before.fallbacks);

  Tensor via_tcp = tcp.get_tensor(ka);
  EXPECT_EQ(std::memcmp(via_tcp.bytes().data(), a.data(), a.size() * 8), 0);
  Tensor b_tcp = tcp.get_tensor(kb);  // stored in C order: element (i, j) is b[i + 256 * j]
  EXPECT_EQ(b_tcp.data<double>()[1 * 128 + 2], b[1 + 256 * 2]);
  EXPECT_EQ(tcp.get_tensor(ks).data<double>()[9], 109.0);

  const std::vector<std::string> names{ka, ks, kb};
  std::vector<Tensor> got = shm.get_tensors(names);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(std::memcmp(got[0].bytes().data(), a.data(), a.size() * 8), 0);
  EXPECT_EQ(got[1].data<double>()[0], 100.0);
  EXPECT_EQ(std::memcmp(got[2].bytes().data(), b_tcp.bytes().data(), b.size() * 8), 0);
  EXPECT_EQ(shm.stats().shm_gets - after.shm_gets, 3u);

  const std::vector<std::string> with_missing{ka, unique("batch.missing"), kb};
  EXPECT_THROW(shm.get_tensors(with_missing), KeyNotFoundError);
  // No loan is left but those lent ahead for the next batch.
  EXPECT_EQ(info_field(tcp, "shm_loans"), info_field(tcp, "shm_loans_ahead"));
  // Everything leased was given back (with the next request).
  tcp.command({"PING"});
  shm.command({"PING"});
  EXPECT_TRUE(eventually_equals(tcp, "shm_leases", 0));
}

// Datasets: their large tensors through shared memory both ways, the small ones on the socket;
// the stored layout is the socket path's (read back over TCP); a dataset put again over an
// existing one replaces its tensors and metadata.
TEST_F(ShmTest, DatasetsUseSharedMemory) {
  Client shm(shm_options(server(), 64 << 10));
  Client tcp(server().tcp_address());
  const std::string name = unique("dataset");
  const std::vector<std::int64_t> big_shape{128, 128}, small_shape{4};
  std::vector<float> field(128 * 128), other(128 * 128);
  std::iota(field.begin(), field.end(), 0.25f);
  std::iota(other.begin(), other.end(), -7.0f);
  const std::vector<std::int32_t> small{1, 2, 3, 4};
  auto make = [&](float offset) {
    DataSet dataset(name);
    std::vector<float> shifted(field);
    for (float& v : shifted) v += offset;
    dataset.add_tensor<float>("field", shifted, big_shape);
    dataset.add_tensor<float>("other", other, big_shape);
    dataset.add_tensor<std::int32_t>("small", small, small_shape);
    dataset.add_meta_scalar("offset", static_cast<double>(offset));
    return dataset;
  };
  const ClientStats before = shm.stats();
  shm.put_dataset(make(0.0f));
  const ClientStats after_put = shm.stats();
  EXPECT_EQ(after_put.shm_puts - before.shm_puts, 2u);
  EXPECT_EQ(after_put.socket_puts - before.socket_puts, 1u);

  DataSet over_tcp = tcp.get_dataset(name);
  EXPECT_EQ(over_tcp.get_tensor_names(), (std::vector<std::string>{"field", "other", "small"}));
  auto f = over_tcp.get_tensor("field").data<float>();
  EXPECT_TRUE(std::equal(f.begin(), f.end(), field.begin(), field.end()));
  EXPECT_EQ(over_tcp.get_meta_scalars<double>("offset"), std::vector<double>{0.0});

  shm.put_dataset(make(1.0f));  // replaces the first
  DataSet got = shm.get_dataset(name);
  EXPECT_EQ(shm.stats().shm_gets - after_put.shm_gets, 3u);
  auto g = got.get_tensor("field").data<float>();
  ASSERT_EQ(g.size(), field.size());
  for (std::size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], field[i] + 1.0f) << i;
  auto o = got.get_tensor("other").data<float>();
  EXPECT_TRUE(std::equal(o.begin(), o.end(), other.begin(), other.end()));
  auto s = got.get_tensor("small").data<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(s.begin(), s.end()), small);
  EXPECT_EQ(got.get_meta_scalars<double>("offset"), std::vector<double>{1.0});
  // No loan is left but those lent ahead for the next put.
  EXPECT_EQ(info_field(tcp, "shm_loans"), info_field(tcp, "shm_loans_ahead"));
  tcp.command({"PING"});
  shm.command({"PING"});
  EXPECT_TRUE(eventually_equals(tcp, "shm_leases", 0));
}

TEST_F(ShmTest, ErrorsAndUncommittedLoans) {
  Client shm(shm_options(server()));
  EXPECT_THROW(shm.view_tensor(unique("missing")), KeyNotFoundError);
  shm.put_bytes(unique("s"), "not a tensor");
  EXPECT_THROW(shm.view_tensor(unique("s")), WrongTypeError);
  EXPECT_THROW(shm.loan(0), InvalidArgumentError);
  TensorLoan wrong = shm.loan(12);
  EXPECT_THROW(shm.put_tensor(unique("t"), std::move(wrong), DType::kFloat32,
                              std::vector<std::int64_t>{4}),
               InvalidArgumentError);
  EXPECT_THROW(shm.put_tensor(unique("t"), TensorLoan(), DType::kFloat32,
                              std::vector<std::int64_t>{3}),
               InvalidArgumentError);
  TensorLoan on_string = shm.loan(12);
  EXPECT_THROW(shm.put_tensor(unique("s"), std::move(on_string), DType::kFloat32,
                              std::vector<std::int64_t>{3}),
               WrongTypeError);
  {
    TensorLoan dropped = shm.loan(1 << 20);  // given back when destroyed
    EXPECT_TRUE(dropped.shared());
  }
  shm.command({"PING"});
  EXPECT_EQ(info_field(shm, "shm_loans"), 0);
}

// The client of a SIGKILLed process holds a view of a deleted tensor, an uncommitted loan and a
// loan lent ahead with its last commit: the server gives all back when the connection drops, and
// its memory figures return to zero.
TEST(ShmReclaim, KilledClientsViewsAndLoansAreReclaimed) {
  ServerProcess server({"--shm-size", std::to_string(64 << 20)});
  Client observer(server.tcp_address());
  pid_t child = fork_holder([&](const std::function<void(bool)>& ready) {
    Client client(shm_options(server));
    std::vector<float> values(1 << 18, 1.5f);  // 1 MiB
    client.put_tensor<float>("doomed", values, std::vector<std::int64_t>{1 << 18});
    // Once spares of the size are made, the next commit lends one ahead for sure.
    if (!eventually_equals(client, "shm_spares_ready", 2)) return;
    client.put_tensor<float>("doomed", values, std::vector<std::int64_t>{1 << 18});
    TensorView view = client.view_tensor("doomed");
    client.delete_tensor("doomed");  // the view now holds the only reference
    TensorLoan loan = client.loan(2 << 20);
    std::memset(loan.bytes().data(), 7, loan.size());
    ready(view.shared() && loan.shared());
  });
  EXPECT_EQ(info_field(observer, "shm_leases"), 1);
  EXPECT_EQ(info_field(observer, "shm_loans"), 2);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 1);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead_bytes"), 1 << 20);
  EXPECT_EQ(info_field(observer, "shm_used"), 4 << 20);
  EXPECT_EQ(info_field(observer, "shm_attached_clients"), 1);

  kill_holder(child);
  EXPECT_TRUE(eventually_equals(observer, "shm_attached_clients", 0));
  EXPECT_EQ(info_field(observer, "shm_leases"), 0);
  EXPECT_EQ(info_field(observer, "shm_loans"), 0);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 0);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead_bytes"), 0);
  EXPECT_EQ(info_field(observer, "shm_used"), 0);
  EXPECT_EQ(info_field(observer, "shm_segments"), 0);
  EXPECT_EQ(info_field(observer, "shm_free"), 64 << 20);
}

// A full pool: puts, loans and views fall back to the socket (and say so); nothing fails.
TEST(ShmLimits, FullPoolFallsBackToTheSocket) {
  ServerProcess server({"--shm-size", std::to_string(1 << 20)});
  Client shm(shm_options(server));
  ASSERT_TRUE(shm.stats().shared_memory);
  std::vector<std::uint8_t> big(2 << 20, 9);
  const std::vector<std::int64_t> shape{2 << 20};
  shm.put_tensor<std::uint8_t>("big", big, shape);
  ClientStats stats = shm.stats();
  EXPECT_EQ(stats.fallbacks, 1u);
  EXPECT_EQ(stats.socket_puts, 1u);
  EXPECT_EQ(stats.shm_puts, 0u);

  TensorView view = shm.view_tensor("big");  // heap tensor; a copy does not fit either
  EXPECT_FALSE(view.shared());
  EXPECT_EQ(view.byte_size(), big.size());
  EXPECT_EQ(view.data<std::uint8_t>()[12345], 9);
  EXPECT_EQ(shm.stats().fallbacks, 2u);

  TensorLoan loan = shm.loan(2 << 20);
  EXPECT_FALSE(loan.shared());
  std::memset(loan.bytes().data(), 3, loan.size());
  shm.put_tensor("loaned", std::move(loan), DType::kUInt8, shape);
  EXPECT_EQ(shm.get_tensor("loaned").data<std::uint8_t>()[99], 3);
  EXPECT_EQ(shm.stats().fallbacks, 4u);  // the loan, then the get's view

  // What fits still goes through shared memory.
  std::vector<std::uint8_t> small(512 << 10, 4);
  shm.put_tensor<std::uint8_t>("small", small, std::vector<std::int64_t>{512 << 10});
  EXPECT_EQ(shm.stats().shm_puts, 1u);
  Client observer(server.tcp_address());
  EXPECT_GT(info_field(observer, "shm_refusals"), 0);
}

TEST(ShmLimits, MaxMemoryRefusesLoans) {
  ServerProcess server({"--maxmemory", std::to_string(1 << 20)});
  Client shm(shm_options(server));
  EXPECT_THROW(shm.loan(4 << 20), OutOfMemoryError);
  std::vector<std::uint8_t> big(4 << 20, 1);
  EXPECT_THROW(shm.put_tensor<std::uint8_t>("big", big, std::vector<std::int64_t>{4 << 20}),
               OutOfMemoryError);
  TensorLoan fits = shm.loan(1024);
  EXPECT_TRUE(fits.shared());
}

// Loans held ahead for the next puts never cost a put its memory: a loan refused under
// --maxmemory while the client holds some gives them back and is asked for again, and the server
// lends none ahead into the last quarter of --maxmemory.
TEST(ShmLimits, LoansHeldAheadGiveWayUnderMaxMemory) {
  ServerProcess server({"--maxmemory", std::to_string(16 << 20), "--shm-size",
                        std::to_string(64 << 20)});
  Client shm(shm_options(server));
  Client observer(server.tcp_address());
  std::vector<std::uint8_t> small(2 << 20, 1), big(13 << 20, 2);
  shm.put_tensor<std::uint8_t>("small", small, std::vector<std::int64_t>{2 << 20});
  ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 2));
  shm.put_tensor<std::uint8_t>("small", small, std::vector<std::int64_t>{2 << 20});
  ASSERT_EQ(info_field(observer, "shm_loans_ahead"), 1);  // 2 stored + 2 held: under 12 MiB
  // 2 stored + 2 held + 13 would pass 16 MiB; without the held loan it fits.
  shm.put_tensor<std::uint8_t>("big", big, std::vector<std::int64_t>{13 << 20});
  EXPECT_EQ(shm.stats().shm_puts, 3u);
  EXPECT_EQ(shm.stats().fallbacks, 0u);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 0);  // 15 stored: none lent ahead
  EXPECT_EQ(info_field(observer, "shm_loans"), 0);
  EXPECT_EQ(observer.get_tensor("big").data<std::uint8_t>()[(13 << 20) - 1], 2);
}

// ---- The spare pool: loan files made ahead of demand by the server's background thread ----------

// After a first loan of a size, the server keeps spares of it, and the next loans of that size
// (rounded to whole pages) are handed out from them: the bytes still arrive exactly.
TEST(ShmPool, SparesServeRepeatedLoansOfASize) {
  ServerProcess server({"--shm-size", std::to_string(64 << 20)});
  ClientOptions options = shm_options(server);
  options.shared_memory_lend_ahead = false;  // every put asks for its loan (SS.SHM.LOAN)
  Client shm(options);
  Client observer(server.tcp_address());
  const std::size_t n = (1 << 20) / sizeof(float);
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(n)};
  std::vector<float> values = sample<float>(n);
  shm.put_tensor<float>("field", values, shape);
  EXPECT_EQ(info_field(observer, "shm_pool_misses"), 1);
  EXPECT_EQ(info_field(observer, "shm_pool_hits"), 0);
  ASSERT_TRUE(eventually_equals(observer, "shm_spares", 2));
  EXPECT_EQ(info_field(observer, "shm_spare_bytes"), 2 << 20);
  EXPECT_EQ(info_field(observer, "shm_used"), 1 << 20);  // spares are not counted as used

  for (int step = 1; step <= 3; ++step) {
    for (float& v : values) v += 1.0f;
    ASSERT_TRUE(eventually_equals(observer, "shm_spares", 2));
    shm.put_tensor<float>("field", values, shape);
    EXPECT_EQ(info_field(observer, "shm_pool_hits"), step);
    std::vector<float> back(n);
    shm.unpack_tensor<float>("field", back);
    EXPECT_EQ(back, values);
  }
  // A loan a few bytes short of the class is served from it too; its tensor has its own size.
  ASSERT_TRUE(eventually_equals(observer, "shm_spares", 2));
  TensorLoan loan = shm.loan((1 << 20) - 100);
  ASSERT_TRUE(loan.shared());
  std::memset(loan.bytes().data(), 5, loan.size());
  shm.put_tensor("short", std::move(loan), DType::kUInt8,
                 std::vector<std::int64_t>{(1 << 20) - 100});
  EXPECT_EQ(info_field(observer, "shm_pool_hits"), 4);
  Tensor short_tensor = observer.get_tensor("short");
  ASSERT_EQ(short_tensor.byte_size(), std::size_t{(1 << 20) - 100});
  EXPECT_EQ(short_tensor.data<std::uint8_t>()[(1 << 20) - 101], 5);
  EXPECT_EQ(shm.stats().fallbacks, 0u);
}

// A put's commit lends the loan for the next put of its size (SS.SHM.COMMIT ... LEND): a field
// put step after step takes one round trip per step, every byte arrives, a put of another size
// holds its own loan beside it, and with the option off nothing is held.
TEST(ShmPool, CommitsLendTheNextPutsLoan) {
  ServerProcess server({"--shm-size", std::to_string(64 << 20)});
  Client shm(shm_options(server));
  Client observer(server.tcp_address());
  const std::size_t n = (1 << 20) / sizeof(float);
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(n)};
  std::vector<float> values = sample<float>(n);
  shm.put_tensor<float>("field", values, shape);  // SS.SHM.LOAN: the size is new
  ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 2));
  shm.put_tensor<float>("field", values, shape);  // its commit finds a spare to lend ahead
  EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 1);
  EXPECT_EQ(info_field(observer, "shm_loans"), 1);
  const std::uint64_t lent_before = shm.stats().shm_lent_ahead_puts;

  for (int step = 1; step <= 4; ++step) {
    for (float& v : values) v += 1.0f;
    ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 2));
    const std::int64_t commands_before = info_field(observer, "total_commands_processed");
    shm.put_tensor<float>("field", values, shape);
    // One command for the put (the commit, no SS.SHM.LOAN), besides this INFO itself.
    EXPECT_EQ(info_field(observer, "total_commands_processed") - commands_before, 2);
    EXPECT_EQ(shm.stats().shm_lent_ahead_puts, lent_before + step);
    EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 1);
    EXPECT_EQ(info_field(observer, "shm_loans_ahead_bytes"), 1 << 20);
    std::vector<float> back(n);
    observer.unpack_tensor<float>("field", back);  // over TCP: the stored bytes themselves
    EXPECT_EQ(back, values);
  }

  // A put of another size asks for its loan and then holds one of its size too.
  std::vector<std::uint8_t> other(4 << 20, 6);  // whole huge pages: its file is 4 MiB either way
  const std::vector<std::int64_t> other_shape{4 << 20};
  shm.put_tensor<std::uint8_t>("other", other, other_shape);
  ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 4));
  shm.put_tensor<std::uint8_t>("other", other, other_shape);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 2);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead_bytes"), 5 << 20);
  const std::uint64_t lent_now = shm.stats().shm_lent_ahead_puts;
  shm.put_tensor<float>("field", values, shape);  // still served by the one it holds
  EXPECT_EQ(shm.stats().shm_lent_ahead_puts, lent_now + 1);
  EXPECT_EQ(shm.stats().fallbacks, 0u);
  EXPECT_EQ(observer.get_tensor("other").data<std::uint8_t>()[(4 << 20) - 1], 6);

  ClientOptions plain = shm_options(server);
  plain.shared_memory_lend_ahead = false;
  Client without(plain);
  ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 4));
  without.put_tensor<float>("plain", values, shape);
  without.put_tensor<float>("plain", values, shape);
  EXPECT_EQ(without.stats().shm_puts, 2u);
  EXPECT_EQ(without.stats().shm_lent_ahead_puts, 0u);
  EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 2);  // the first client's, no more
}

// A loan held ahead for a size the client no longer puts is given back once 32 later puts have
// taken other loans, so it does not hold the server's memory for the client's whole life.
TEST(ShmPool, LoansAheadNotUsedLatelyAreGivenBack) {
  ServerProcess server({"--shm-size", std::to_string(64 << 20)});
  Client shm(shm_options(server));
  Client observer(server.tcp_address());
  std::vector<std::uint8_t> once(1 << 20, 1), often(2 << 20, 2);
  const std::vector<std::int64_t> once_shape{1 << 20}, often_shape{2 << 20};
  shm.put_tensor<std::uint8_t>("once", once, once_shape);
  ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 2));
  shm.put_tensor<std::uint8_t>("once", once, once_shape);  // holds a 1 MiB loan from now on
  ASSERT_EQ(info_field(observer, "shm_loans_ahead_bytes"), 1 << 20);
  for (int i = 0; i < 33; ++i) shm.put_tensor<std::uint8_t>("often", often, often_shape);
  shm.command({"PING"});  // the loan given back is released in front of the next request
  // Held now: at most one 2 MiB loan (whether the last commit found a spare), never the 1 MiB one.
  const std::int64_t held = info_field(observer, "shm_loans_ahead_bytes");
  EXPECT_TRUE(held == 0 || held == (2 << 20)) << held;
  EXPECT_EQ(info_field(observer, "shm_loans"), info_field(observer, "shm_loans_ahead"));
}

// A batch put step after step (put_tensors: two tensors of one size, one of another) is one
// round trip once the client holds a loan ahead for each: only the commits are sent.
TEST(ShmPool, BatchesUseLoansLentAhead) {
  ServerProcess server({"--shm-size", std::to_string(64 << 20)});
  Client shm(shm_options(server));
  Client observer(server.tcp_address());
  std::vector<std::uint8_t> a(1 << 20), b(1 << 20), c(2 << 20);
  auto fill = [&](int step) {
    std::fill(a.begin(), a.end(), static_cast<std::uint8_t>(step));
    std::fill(b.begin(), b.end(), static_cast<std::uint8_t>(step + 1));
    std::fill(c.begin(), c.end(), static_cast<std::uint8_t>(step + 2));
  };
  const std::vector<std::int64_t> one_mib{1 << 20}, two_mib{2 << 20};  // outlive the refs
  const std::vector<TensorRef> refs{TensorRef::of<std::uint8_t>("a", a, one_mib),
                                    TensorRef::of<std::uint8_t>("b", b, one_mib),
                                    TensorRef::of<std::uint8_t>("c", c, two_mib)};
  int step = 0;
  // Until each tensor has a loan held ahead (the first batches ask for loans: spares are made
  // two per size, after the sizes are first asked for).
  for (; step < 20 && info_field(observer, "shm_loans_ahead") < 3; ++step) {
    ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", step == 0 ? 0 : 4));
    fill(step);
    shm.put_tensors(refs);
  }
  ASSERT_EQ(info_field(observer, "shm_loans_ahead"), 3);
  for (int round = 0; round < 3; ++round, ++step) {
    ASSERT_TRUE(eventually_equals(observer, "shm_spares_ready", 4));
    fill(step);
    const std::uint64_t lent = shm.stats().shm_lent_ahead_puts;
    const std::int64_t commands = info_field(observer, "total_commands_processed");
    shm.put_tensors(refs);
    // The 3 commits (no SS.SHM.LOAN), besides this INFO itself.
    EXPECT_EQ(info_field(observer, "total_commands_processed") - commands, 4);
    EXPECT_EQ(shm.stats().shm_lent_ahead_puts, lent + 3);
    EXPECT_EQ(info_field(observer, "shm_loans_ahead"), 3);
    EXPECT_EQ(observer.get_tensor("a").data<std::uint8_t>()[(1 << 20) - 1], step);
    EXPECT_EQ(observer.get_tensor("b").data<std::uint8_t>()[0], step + 1);
    EXPECT_EQ(observer.get_tensor("c").data<std::uint8_t>()[(2 << 20) - 1], step + 2);
  }
  EXPECT_EQ(shm.stats().fallbacks, 0u);
}

// Spares never cost a value its room: a tensor that fits only without them drops them, goes
// through shared memory, and counts no refusal; values and spares together stay within the pool.
TEST(ShmPool, SparesGiveWayToValues) {
  ServerProcess server({"--shm-size", std::to_string(8 << 20)});
  Client shm(shm_options(server));
  Client observer(server.tcp_address());
  std::vector<std::uint8_t> small(1 << 20, 1), big(6 << 20, 2);
  shm.put_tensor<std::uint8_t>("small", small, std::vector<std::int64_t>{1 << 20});
  ASSERT_TRUE(eventually_equals(observer, "shm_spares", 2));  // a quarter of 8 MiB
  shm.put_tensor<std::uint8_t>("big", big, std::vector<std::int64_t>{6 << 20});
  shm.put_tensor<std::uint8_t>("small", small, std::vector<std::int64_t>{1 << 20});
  ClientStats stats = shm.stats();
  EXPECT_EQ(stats.shm_puts, 3u);
  EXPECT_EQ(stats.fallbacks, 0u);
  EXPECT_EQ(info_field(observer, "shm_refusals"), 0);
  EXPECT_EQ(info_field(observer, "shm_used"), 7 << 20);
  EXPECT_EQ(observer.get_tensor("big").data<std::uint8_t>()[(6 << 20) - 1], 2);
  std::this_thread::sleep_for(200ms);  // whatever the thread makes now must fit beside them
  EXPECT_LE(info_field(observer, "shm_used") + info_field(observer, "shm_spare_bytes"), 8 << 20);
}

// A client killed while it holds loans that came from spares: the loans are reclaimed like any
// other, and the server goes on making spares for the size.
TEST(ShmPool, KilledClientsPooledLoansAreReclaimed) {
  ServerProcess server({"--shm-size", std::to_string(64 << 20)});
  Client observer(server.tcp_address());
  {
    Client warm(shm_options(server));
    TensorLoan first = warm.loan(2 << 20);  // a miss: the size class is learnt
    ASSERT_TRUE(first.shared());
  }
  ASSERT_TRUE(eventually_equals(observer, "shm_spares", 2));
  pid_t child = fork_holder([&](const std::function<void(bool)>& ready) {
    Client client(shm_options(server));
    TensorLoan a = client.loan(2 << 20);
    TensorLoan b = client.loan(2 << 20);
    std::memset(a.bytes().data(), 1, a.size());
    ready(a.shared() && b.shared());
  });
  EXPECT_EQ(info_field(observer, "shm_pool_hits"), 2);
  EXPECT_EQ(info_field(observer, "shm_loans"), 2);
  EXPECT_EQ(info_field(observer, "shm_used"), 4 << 20);

  kill_holder(child);
  EXPECT_TRUE(eventually_equals(observer, "shm_attached_clients", 0));
  EXPECT_EQ(info_field(observer, "shm_loans"), 0);
  EXPECT_EQ(info_field(observer, "shm_used"), 0);
  EXPECT_TRUE(eventually_equals(observer, "shm_spares", 2));
  EXPECT_EQ(info_field(observer, "shm_files"), 2);  // the spares, nothing else
}

// A server of the fast path's first form (no SS.SHM.FEATURES, no COMMIT ... LEND), as a client
// newer than its server meets it: it attaches, lends memfds and records the commits it gets;
// anything else is an unknown command.
class FirstFormShmServer {
 public:
  std::string address() const { return server_.address(); }
  std::vector<std::vector<std::string>> commits() {
    std::lock_guard lock(mutex_);
    return commits_;
  }

 private:
  ScriptedServer::Reply answer(const std::vector<std::string>& args) {
    if (args[0] == "SS.SHM.ATTACH") return {"+OK\r\n"};
    if (args[0] == "SS.SHM.RELEASE") return {":0\r\n"};
    if (args[0] == "SS.SHM.LOAN") {
      const int fd = ::memfd_create("first-form-loan", MFD_CLOEXEC);
      if (fd < 0 || ::ftruncate(fd, std::stoll(args[1])) != 0) return {"-ERR no memfd\r\n"};
      return {":" + std::to_string(next_id_++) + "\r\n", fd};
    }
    if (args[0] == "SS.SHM.COMMIT") {
      std::lock_guard lock(mutex_);
      commits_.push_back(args);
      return {args.back() == "LEND" ? "-ERR invalid or negative value found in tensor shape\r\n"
                                    : "+OK\r\n"};
    }
    return {"-ERR unknown command\r\n"};
  }

  std::mutex mutex_;
  std::vector<std::vector<std::string>> commits_;
  std::int64_t next_id_ = 1;  // on the serving thread
  ScriptedServer server_{[this](const std::vector<std::string>& args) { return answer(args); }};
};

// A client newer than its server asks for loans ahead only where SS.SHM.FEATURES offers them:
// against the fast path's first form every put still goes through shared memory, and no commit
// carries LEND (which such a server would take for a dimension, consuming the loan).
TEST(ShmLimits, LoansAheadAreAskedForOnlyWhereTheServerOffersThem) {
  FirstFormShmServer server;
  ClientOptions options;
  options.address = server.address();
  options.shared_memory_min_bytes = 0;
  options.shared_memory_put_min_bytes = 0;
  Client client(options);
  ASSERT_TRUE(client.stats().shared_memory);
  std::vector<float> values(4096, 2.5f);
  const std::vector<std::int64_t> shape{4096};
  for (int i = 0; i < 3; ++i) client.put_tensor<float>("t", values, shape);
  EXPECT_EQ(client.stats().shm_puts, 3u);
  EXPECT_EQ(client.stats().shm_lent_ahead_puts, 0u);
  const auto commits = server.commits();
  ASSERT_EQ(commits.size(), 3u);
  for (const auto& commit : commits) {
    EXPECT_EQ(commit.back(), "4096");  // the shape's last dimension: no LEND
  }
}

TEST(ShmLimits, DisabledServerAndTcpUseTheSocket) {
  ServerProcess server({"--no-shm"});
  Client client(shm_options(server));
  EXPECT_FALSE(client.stats().shared_memory);
  std::vector<float> values(100, 2.0f);
  client.put_tensor<float>("t", values, std::vector<std::int64_t>{100});
  TensorView view = client.view_tensor("t");
  EXPECT_FALSE(view.shared());
  EXPECT_EQ(view.data<float>()[50], 2.0f);
  EXPECT_EQ(client.stats().socket_puts, 1u);
  EXPECT_EQ(client.stats().socket_gets, 1u);
  EXPECT_EQ(client.stats().fallbacks, 0u);
  EXPECT_THROW(client.command({"SS.SHM.ATTACH"}), ServerError);

  Client tcp(shared_server().tcp_address());
  EXPECT_FALSE(tcp.stats().shared_memory);
  try {
    tcp.command({"SS.SHM.ATTACH"});
    FAIL() << "attached over TCP";
  } catch (const ServerError& e) {
    EXPECT_NE(std::string(e.what()).find("Unix socket"), std::string::npos);
  }
  ClientOptions off = shm_options(shared_server());
  off.shared_memory = SharedMemoryMode::kOff;
  EXPECT_FALSE(Client(off).stats().shared_memory);
}

// Raw RESP over the Unix socket (no descriptors are read here).
std::string unix_exchange(const std::string& path, const std::string& request) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  (void)!::write(fd, request.data(), request.size());
  char buffer[512];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
}

TEST(ShmSecurity, AttachAndLoansNeedAuth) {
  ServerProcess server({"--requirepass", "s3cret"});
  EXPECT_EQ(unix_exchange(server.unix_socket(), "SS.SHM.ATTACH\r\n").rfind("-NOAUTH", 0), 0u);
  EXPECT_EQ(unix_exchange(server.unix_socket(), "SS.SHM.LOAN 100\r\n").rfind("-NOAUTH", 0), 0u);
  EXPECT_EQ(unix_exchange(server.unix_socket(), "AUTH s3cret\r\nSS.SHM.LOAN 100\r\n"),
            "+OK\r\n-ERR shared memory is not attached on this connection: send SS.SHM.ATTACH "
            "first (Unix socket connections only)\r\n");
  ClientOptions options = shm_options(server);
  options.password = "s3cret";
  Client client(options);
  EXPECT_TRUE(client.stats().shared_memory);
  std::vector<float> values(10, 1.0f);
  client.put_tensor<float>("t", values, std::vector<std::int64_t>{10});
  EXPECT_EQ(client.stats().shm_puts, 1u);
}

// Another local user can neither connect to the socket (0700, in a 0700 directory) nor open the
// server's descriptors through /proc: the memory is reachable only through the socket.
TEST(ShmSecurity, OtherUserCannotReachTheMemory) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  ServerProcess server;
  Client client(shm_options(server));
  std::vector<float> values(1 << 16, 1.0f);
  client.put_tensor<float>("t", values, std::vector<std::int64_t>{1 << 16});
  TensorView view = client.view_tensor("t");
  ASSERT_TRUE(view.shared());
  ASSERT_GE(info_field(client, "shm_segments"), 1);

  pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, server.unix_socket().c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) ::_exit(11);
    if (errno != EACCES) ::_exit(12);
    std::string fds = "/proc/" + std::to_string(server.pid()) + "/fd";
    if (DIR* dir = ::opendir(fds.c_str())) {  // readable would already be a leak
      ::closedir(dir);
      ::_exit(13);
    }
    for (int n = 0; n < 64; ++n) {
      if (::open((fds + "/" + std::to_string(n)).c_str(), O_RDONLY) >= 0) ::_exit(14);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: could not become nobody, 11: connected, 12: not "
                                       "EACCES, 13/14: could open the server's descriptors";
}

}  // namespace
}  // namespace slipstream::testing
