// StreamWriter and StreamReader against a real server: 4 writer threads, two reader groups (3
// readers with roundrobin, 1 with slicedataset), every element of every step checked, attributes,
// end of stream, a writer that goes away mid-step, misuse, boxes loaded beyond a reader's share
// (load_box, load_boxes), whole steps in turn (round_robin) and a precious first step.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "client_fixture.hpp"
#include "support/scripted_server.hpp"
#include "slipstream/stream.hpp"

// mmap is interposed for this test executable so that a test can count the calls one thread
// makes (the stream reader's mappings); every call still goes to the kernel. Not under
// ThreadSanitizer, whose runtime must see every mapping (the executable crashed at start-up with
// the interposer, so none of its tests ran): the count is not checked there.
namespace {
thread_local bool counting_mmaps = false;
thread_local int counted_mmaps = 0;
#if defined(__SANITIZE_THREAD__)
constexpr bool kCountsMmaps = false;
#else
constexpr bool kCountsMmaps = true;
#endif
}  // namespace

#if !defined(__SANITIZE_THREAD__)
extern "C" __attribute__((visibility("default"))) void* mmap(void* address, size_t size,
                                                         int protection, int flags, int fd,
                                                         off_t offset) {
  if (counting_mmaps) ++counted_mmaps;
  return reinterpret_cast<void*>(
      ::syscall(SYS_mmap, address, size, protection, flags, fd, offset));
}
#endif

namespace slipstream::testing {
namespace {

constexpr std::uint32_t kWriters = 4;
constexpr std::uint64_t kRows = 16, kCols = 6;  // meshes/E/x: each writer owns 4 rows
constexpr int kSteps = 4;

// The value written at (row, col) of meshes/E/x in `step`.
double field(int step, std::uint64_t row, std::uint64_t col) {
  return step * 1000.0 + static_cast<double>(row * kCols + col);
}

ClientOptions options_for(const ServerProcess& server) {
  ClientOptions options;
  options.address = server.tcp_address();
  return options;
}

// Writer `rank` writes its 4 rows of each step as two chunks of 2 rows, plus a particle record
// of rank + 1 elements, and the step's time and dt.
void write_stream(const ClientOptions& options, const std::string& name, std::uint32_t rank,
                  StreamWriterOptions writer_options = {}) {
  StreamWriter writer(options, name, rank, kWriters, writer_options);
  if (rank == 0) writer.set_stream_attribute("/", "software", std::string("slipstream test"));
  const std::vector<std::uint64_t> global = {kRows, kCols};
  const std::vector<std::uint64_t> particles_global = {kWriters * (kWriters + 1) / 2};
  for (int step = 0; step < kSteps; ++step) {
    writer.begin_step(step);
    std::vector<std::vector<double>> rows(2);
    for (int half = 0; half < 2; ++half) {
      const std::uint64_t first = rank * 4 + static_cast<std::uint64_t>(half) * 2;
      for (std::uint64_t r = first; r < first + 2; ++r) {
        for (std::uint64_t c = 0; c < kCols; ++c) rows[half].push_back(field(step, r, c));
      }
      const std::vector<std::uint64_t> offset = {first, 0}, extent = {2, kCols};
      writer.put_chunk<double>("meshes/E/x", global, offset, extent, rows[half]);
    }
    std::vector<std::int32_t> ids(rank + 1, static_cast<std::int32_t>(step * 100 + rank));
    const std::vector<std::uint64_t> offset = {rank * (rank + 1) / 2}, extent = {rank + 1};
    writer.put_chunk<std::int32_t>("particles/e/id", particles_global, offset, extent, ids);
    if (rank == 0) {
      writer.set_attribute("/", "time", 0.5 * step);
      writer.set_attribute("/", "dt", 0.5);
      writer.set_attribute("meshes/E", "axisLabels", std::vector<std::string>{"x", "y"});
      writer.set_attribute("meshes/E", "gridIndexOffset",
                           std::vector<std::int64_t>{-3, step, std::int64_t{1} << 40});
    }
    writer.end_step();
  }
  writer.close();
}

// What one group saw: per step, how often each element of meshes/E/x was delivered.
struct GroupSeen {
  std::mutex mutex;
  std::map<int, std::vector<int>> counts;
  std::atomic<int> wrong{0};
  std::atomic<int> ends{0};
  std::atomic<int> shared{0};  // pieces that were views of the writers' shared memory
};

void read_stream(const ClientOptions& options, const std::string& name, const std::string& group,
                 std::uint32_t rank, std::uint32_t size, const std::string& strategy,
                 GroupSeen& seen) {
  StreamReaderOptions reader_options;
  reader_options.strategy = strategy;
  reader_options.hostname = "host" + std::to_string(rank);
  StreamReader reader(options, name, group, rank, size, reader_options);
  for (;;) {
    StreamNext next = reader.next_step();
    if (next.kind == StreamNext::Kind::kEnd) {
      ++seen.ends;
      return;
    }
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    StreamStep& step = *next.step;
    const int number = static_cast<int>(step.number());
    bool has_time = false;
    for (const auto& a : step.attributes()) {
      if (a.name == "time" && a.step == number) has_time = std::get<double>(a.value) == 0.5 * number;
    }
    if (!has_time) ++seen.wrong;
    bool has_ints = false;  // an integer array comes back as one (the server sends integers)
    for (const auto& a : step.attributes()) {
      if (a.name == "gridIndexOffset" && a.path == "meshes/E") {
        has_ints = std::get<std::vector<std::int64_t>>(a.value) ==
                   std::vector<std::int64_t>{-3, number, std::int64_t{1} << 40};
      }
    }
    if (!has_ints) ++seen.wrong;
    for (const StreamPiece& piece : step.load("meshes/E/x")) {
      if (piece.shared) ++seen.shared;
      const auto& p = piece.piece;
      const auto* values = reinterpret_cast<const double*>(piece.bytes.data());
      std::lock_guard lock(seen.mutex);
      auto& counts = seen.counts[number];
      counts.resize(kRows * kCols);
      for (std::uint64_t r = 0; r < p.extent[0]; ++r) {
        for (std::uint64_t c = 0; c < p.extent[1]; ++c) {
          const std::uint64_t row = p.offset[0] + r, col = p.offset[1] + c;
          if (values[r * p.extent[1] + c] != field(number, row, col)) ++seen.wrong;
          ++counts[row * kCols + col];
        }
      }
      // Provenance: writer `source_rank` wrote rows 4 * rank .. 4 * rank + 3.
      if (p.offset[0] / 4 != p.source_rank) ++seen.wrong;
    }
    for (const StreamPiece& piece : step.load("particles/e/id")) {
      const auto* ids = reinterpret_cast<const std::int32_t*>(piece.bytes.data());
      for (std::uint64_t i = 0; i < piece.piece.extent[0]; ++i) {
        if (ids[i] != number * 100 + static_cast<std::int32_t>(piece.piece.source_rank)) ++seen.wrong;
      }
    }
    step.release();
  }
}

// 4 writers, a group of 3 (roundrobin) and a group of 1 (slicedataset); every element of every
// step must reach each group exactly once. Returns the number of pieces seen as shared memory.
int four_writers_two_groups(const ClientOptions& options, StreamWriterOptions writer_options) {
  const std::string name = unique("stream");
  GroupSeen train, archive;
  std::vector<std::thread> threads;
  // Readers first: they wait for the writers.
  for (std::uint32_t r = 0; r < 3; ++r) {
    threads.emplace_back(read_stream, options, name, "train", r, 3, "roundrobin", std::ref(train));
  }
  threads.emplace_back(read_stream, options, name, "archive", 0, 1, "slicedataset",
                       std::ref(archive));
  // Both groups are expected: the writers keep every step for a group that has not joined yet,
  // however late its readers' threads start.
  writer_options.expected_groups = 2;
  for (std::uint32_t w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] { write_stream(options, name, w, writer_options); });
  }
  for (auto& t : threads) t.join();
  for (GroupSeen* seen : {&train, &archive}) {
    EXPECT_EQ(seen->wrong.load(), 0);
    EXPECT_EQ(seen->counts.size(), static_cast<std::size_t>(kSteps));
    for (const auto& [step, counts] : seen->counts) {
      for (int count : counts) EXPECT_EQ(count, 1) << "step " << step;
    }
  }
  EXPECT_EQ(train.ends.load(), 3);
  EXPECT_EQ(archive.ends.load(), 1);
  return train.shared.load() + archive.shared.load();
}

TEST(StreamClient, FourWritersTwoGroupsEveryElementOnceAndInOrder) {
  ServerProcess& server = shared_server();
  EXPECT_EQ(four_writers_two_groups(options_for(server), {}), 0);  // TCP: bytes on the socket
}

// The same over the Unix socket with every chunk in shared memory: the writers copy their chunks
// into segments the server lends them, the readers map them (no copy), and every element is
// still delivered exactly once per group, in order.
TEST(StreamClient, SharedMemoryChunksAreMappedByReadersAndEveryElementArrives) {
  ServerProcess& server = shared_server();
  ClientOptions options;
  options.address = server.unix_address();
  StreamWriterOptions writer_options;
  writer_options.shared_memory_min_bytes = 1;
  // Every meshes/E/x chunk (8 per step) reaches each group as a mapped view: the whole chunk, or
  // whole rows of it for slicedataset's cuts.
  EXPECT_GE(four_writers_two_groups(options, writer_options), 2 * 8 * kSteps);
}

// Segments are reused step after step: over 30 steps with a queue of 2, the stream never holds
// more segment bytes than its queue limit's worth of chunks (plus the step being written).
// A reader cannot map a segment writable, and a step's bytes stay as written while it is held.
// One writer of a group of 1 writes `steps` steps of meshes/rho, `count` doubles each, every
// element the step's number; then closes.
void write_rho_steps(const ClientOptions& options, const std::string& name, int steps,
                     std::uint64_t count, StreamWriterOptions writer_options) {
  writer_options.expected_groups = 1;
  StreamWriter writer(options, name, 0, 1, writer_options);
  std::vector<double> rho(count);
  const std::vector<std::uint64_t> global{count}, offset{0}, extent{count};
  for (int step = 0; step < steps; ++step) {
    writer.begin_step(step);
    std::fill(rho.begin(), rho.end(), static_cast<double>(step));
    writer.put_chunk<double>("meshes/rho", global, offset, extent, rho);
    writer.end_step();
  }
  writer.close();
}

// An integer field of SS.STREAM.INFO (-1 when it has none of that name).
std::int64_t stream_info_field(Client& info, const std::string& stream, std::string_view field) {
  const Reply fields = info.command({"SS.STREAM.INFO", stream});
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    if (fields.elements[i].string == field) return fields.elements[i + 1].integer;
  }
  return -1;
}

// Loads the step's meshes/rho: counts its shared pieces and the elements that are not the step's
// number.
void check_rho(StreamStep& step, std::atomic<int>& shared, std::atomic<int>& wrong) {
  for (const StreamPiece& piece : step.load("meshes/rho")) {
    shared += piece.shared ? 1 : 0;
    for (double v : piece.as<double>()) {
      if (v != static_cast<double>(step.number())) ++wrong;
    }
  }
}

TEST(StreamClient, SharedMemorySegmentsAreReusedAndReadOnlyForReaders) {
  ServerProcess& server = shared_server();
  ClientOptions options;
  options.address = server.unix_address();
  const std::string name = unique("stream");
  constexpr std::uint64_t kCount = 64 * 1024;  // 512 KiB of doubles per step
  constexpr int kManySteps = 30;
  std::atomic<int> wrong{0}, shared{0};
  std::atomic<std::int64_t> most_segment_bytes{0};
  std::atomic<bool> info_shows_segments{false};
  std::thread reader_thread([&] {
    StreamReader reader(options, name, "g", 0, 1);
    Client info(options);
    for (;;) {
      StreamNext next = reader.next_step();
      if (next.kind != StreamNext::Kind::kStep) break;
      check_rho(*next.step, shared, wrong);
      most_segment_bytes = std::max<std::int64_t>(most_segment_bytes,
                                                  stream_info_field(info, name, "segment_bytes"));
      const std::string streams = info.command({"INFO", "streams"}).string;
      if (streams.find("stream_segment_bytes:0\r") == std::string::npos &&
          streams.find("stream_segment_bytes:") != std::string::npos) {
        info_shows_segments = true;
      }
      next.step->release();
    }
  });
  write_rho_steps(options, name, kManySteps, kCount, {});
  reader_thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(shared.load(), kManySteps);
  EXPECT_GT(most_segment_bytes.load(), 0);
  EXPECT_TRUE(info_shows_segments.load());  // INFO streams: stream_segment_bytes
  EXPECT_LE(most_segment_bytes.load(), static_cast<std::int64_t>(3 * kCount * sizeof(double)));
}

// A stream's connections on the shared-memory path share one I/O thread (the first one's to bind
// a rank), so that the END completing a step answers the readers' parked NEXTs, and a RELEASE the
// writers' BEGINs, without a hand-off between the server's threads; every step still arrives
// whole after the move. CLIENT LIST's io-thread shows where each connection runs: without the
// move, the server's round robin put these four connections, opened one after the other, on
// both of its threads. A connection over TCP (its chunk bytes go through the socket) stays
// where it was accepted.
TEST(StreamClient, AStreamsSharedMemoryConnectionsShareOneIoThread) {
  ServerProcess server({"--threads", "2"});
  ClientOptions options;
  options.address = server.unix_address();
  const std::string name = unique("stream");
  constexpr std::uint32_t kRanks = 2;
  constexpr std::uint64_t kCount = 8192;  // doubles per writer per step
  constexpr int kManySteps = 12;
  StreamWriterOptions writer_options;
  writer_options.shared_memory_min_bytes = 1;
  writer_options.expected_groups = 1;
  StreamReaderOptions reader_options;
  reader_options.strategy = "blocksofsourceranks";
  std::vector<StreamWriter> writers;
  std::vector<StreamReader> readers;
  for (std::uint32_t w = 0; w < kRanks; ++w) writers.emplace_back(options, name, w, kRanks, writer_options);
  for (std::uint32_t r = 0; r < kRanks; ++r) {
    readers.emplace_back(options, name, "g", r, kRanks, reader_options);
  }
  ClientOptions tcp = options_for(server);
  StreamReader tcp_reader(tcp, name, "tcp", 0, 1);  // a second group, over TCP
  std::atomic<int> wrong{0}, elements{0}, shared{0};
  std::vector<std::thread> threads;
  for (std::uint32_t w = 0; w < kRanks; ++w) {
    threads.emplace_back([&, w] {
      std::vector<double> values(kCount);
      const std::vector<std::uint64_t> global{kRanks * kCount}, offset{w * kCount}, extent{kCount};
      for (int step = 0; step < kManySteps; ++step) {
        writers[w].begin_step(step);
        std::fill(values.begin(), values.end(), step * 10.0 + w);
        writers[w].put_chunk<double>("meshes/rho", global, offset, extent, values);
        writers[w].end_step();
      }
    });
  }
  auto read = [&](StreamReader& reader, bool counted) {
    for (int step = 0; step < kManySteps; ++step) {
      StreamNext next = reader.next_step();
      if (next.kind != StreamNext::Kind::kStep || next.step->number() != step) {
        ++wrong;
        return;
      }
      for (const StreamPiece& piece : next.step->load("meshes/rho")) {
        if (counted) shared += piece.shared ? 1 : 0;
        for (double v : piece.as<double>()) {
          if (v != step * 10.0 + piece.piece.source_rank) ++wrong;
          if (counted) ++elements;
        }
      }
      next.step->release();
    }
  };
  for (StreamReader& reader : readers) threads.emplace_back([&] { read(reader, true); });
  threads.emplace_back([&] { read(tcp_reader, false); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(elements.load(), static_cast<int>(kManySteps * kRanks * kCount));
  EXPECT_EQ(shared.load(), kManySteps * static_cast<int>(kRanks));

  Client info(options);
  std::vector<std::string> local_threads;
  std::size_t tcp_connections = 0;
  std::istringstream lines(info.command({"CLIENT", "LIST"}).string);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("cmd=ss.stream.") == std::string::npos) continue;
    const auto at = line.find(" io-thread=");
    ASSERT_NE(at, std::string::npos) << line;
    if (line.find(" flags=U ") == std::string::npos) {
      ++tcp_connections;
      continue;
    }
    local_threads.push_back(line.substr(at + 11, line.find(' ', at + 11) - at - 11));
  }
  EXPECT_EQ(tcp_connections, 1u);
  ASSERT_EQ(local_threads.size(), 2u * kRanks);
  for (const std::string& thread : local_threads) EXPECT_EQ(thread, local_threads[0]);
  for (StreamWriter& writer : writers) writer.close();
  for (StreamReader& reader : readers) EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
  EXPECT_EQ(tcp_reader.next_step().kind, StreamNext::Kind::kEnd);
}

// The stream requests a reader sends for 3 steps and the end against a scripted server that
// knows NEXT ... RELEASE or not (as one of the earlier form, which refuses the option as a
// syntax error before acting on the request): "NEXT", "NEXT+RELEASE <step>", "RELEASE <step>".
// Over the Unix socket, but this server knows no shared memory: the reader asks without MAP.
std::vector<std::string> reader_requests(bool server_knows_release) {
  std::mutex mutex;
  std::vector<std::string> requests;
  int steps_given = 0;
  ScriptedServer server([&](const std::vector<std::string>& args) -> ScriptedServer::Reply {
    std::string seen = args[0];
    for (std::size_t i = 4; i + 1 < args.size(); ++i) {
      if (args[i] == "RELEASE") seen += "+RELEASE " + args[i + 1];
    }
    if (args[0] == "SS.STREAM.RELEASE") seen += " " + args[4];
    if (seen.starts_with("SS.STREAM.")) {
      std::lock_guard lock(mutex);
      requests.push_back(seen.substr(10));
    }
    if (args[0] == "SS.STREAM.JOIN" || args[0] == "SS.STREAM.RELEASE") return {"+OK\r\n"};
    if (args[0] != "SS.STREAM.NEXT") return {"-ERR unknown command\r\n"};
    if (!server_knows_release && seen.find("+RELEASE") != std::string::npos) {
      // The first form's words (later ones name what they got).
      return {"-ERR syntax error: expected nothing or TIMEOUT ms after the arguments\r\n"};
    }
    if (steps_given == 3) return {"*1\r\n$3\r\nend\r\n"};
    const std::string n = std::to_string(steps_given++);
    return {"*7\r\n$4\r\nstep\r\n:" + n +
            "\r\n*1\r\n*2\r\n:0\r\n$2\r\nh0\r\n*1\r\n*2\r\n:0\r\n$2\r\nh0\r\n"
            "$10\r\nroundrobin\r\n*0\r\n*0\r\n"};
  });
  ClientOptions options;
  options.address = server.address();
  {
    StreamReader reader(options, "s", "g", 0, 1);
    for (int step = 0; step < 3; ++step) {
      StreamNext next = reader.next_step();
      EXPECT_EQ(next.kind, StreamNext::Kind::kStep);
      if (next.step) {
        EXPECT_EQ(next.step->number(), step);
      }
    }
    EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
  }
  std::lock_guard lock(mutex);
  std::erase(requests, "LEAVE");
  return requests;
}

// A reader releases the step it holds with its request for the next (NEXT ... RELEASE step): one
// reply per step, where a RELEASE ahead of the NEXT got its +OK at once and woke the reader a
// second time while its NEXT waited. A server that does not know the option refuses it; the reader
// then asks again with RELEASE pipelined ahead of NEXT, and asks that way from then on. Either way
// every step is released once, before the next is asked for.
TEST(StreamClient, AReaderReleasesWithItsNextRequestWhereTheServerKnowsHow) {
  EXPECT_EQ(reader_requests(true),
            (std::vector<std::string>{"JOIN", "NEXT", "NEXT+RELEASE 0", "NEXT+RELEASE 1",
                                      "NEXT+RELEASE 2"}));
  EXPECT_EQ(reader_requests(false),
            (std::vector<std::string>{"JOIN", "NEXT", "NEXT+RELEASE 0", "RELEASE 0", "NEXT",
                                      "RELEASE 1", "NEXT", "RELEASE 2", "NEXT"}));
}

// A writer running ahead of its reader with a queue limit of 8 lends its segments again every 8
// steps. The server keeps the writer's freed segments for that (it kept one and destroyed the
// rest, so that the writer made a new segment at nearly every step), and the reader keeps its
// mappings as long (it kept them 4 steps and mapped every segment again): the reader maps each
// segment once. Its mmap calls are counted by the interposer above this file's tests. And the
// server passes each segment's descriptor to the reader's connection once (NEXT ... MAP CACHED;
// before, every NEXT passed every chunk's descriptor again, which the reader closed at once):
// the descriptors sent over the run are the writer's fresh segments and the reader's first sight
// of each, no more.
TEST(StreamClient, AWriterAheadByAWholeQueueReusesItsSegmentsAndTheReaderItsMappings) {
  ServerProcess& server = shared_server();
  ClientOptions options;
  options.address = server.unix_address();
  const std::string name = unique("stream");
  constexpr std::uint64_t kCount = 16 * 1024;  // 128 KiB of doubles per step
  constexpr int kQueue = 8, kManySteps = 48;
  Client observer(options);
  const std::int64_t passed_before = info_field(observer, "shm_descriptors_passed");
  ASSERT_GE(passed_before, 0);
  std::atomic<int> wrong{0}, shared{0}, steps{0}, reader_mmaps{0};
  std::atomic<std::int64_t> segments_made{0};
  std::thread reader_thread([&] {
    StreamReader reader(options, name, "g", 0, 1);
    Client info(options);
    counting_mmaps = true;
    for (;;) {
      StreamNext next = reader.next_step();
      if (next.kind != StreamNext::Kind::kStep) break;
      ++steps;
      check_rho(*next.step, shared, wrong);
      next.step->release();
      segments_made = stream_info_field(info, name, "segments_made");
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the writer gets ahead
    }
    reader_mmaps = counted_mmaps;
    counting_mmaps = false;
  });
  StreamWriterOptions writer_options;
  writer_options.queue_limit = kQueue;
  write_rho_steps(options, name, kManySteps, kCount, writer_options);
  reader_thread.join();
  EXPECT_EQ(steps.load(), kManySteps);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(shared.load(), kManySteps);
  EXPECT_GT(segments_made.load(), 0);
  EXPECT_LE(segments_made.load(), kQueue) << "segments the server made in " << kManySteps
                                          << " steps";
  const std::int64_t passed = info_field(observer, "shm_descriptors_passed") - passed_before;
  EXPECT_GE(passed, segments_made.load());
  EXPECT_LE(passed, 2 * segments_made.load()) << "descriptors passed in " << kManySteps << " steps";
  if (kCountsMmaps) {
    EXPECT_GT(reader_mmaps.load(), 0);
    EXPECT_LE(reader_mmaps.load(), kQueue + 1) << "mappings made by the reader in " << kManySteps
                                               << " steps";
  }
}

// A particle record's chunk changes size from step to step (particles move between ranks). Its
// segments are made in size classes, so a chunk within the class of a freed segment reuses it:
// the writer makes no more segments than its queue holds steps, put_chunk and loan_chunk alike,
// and readers over shared memory (mapped, the chunk at the start of a larger segment) and over
// TCP (copied: exactly the chunk's bytes) get every element.
TEST(StreamClient, ChunksOfChangingSizeReuseSegmentsOfTheirSizeClass) {
  ServerProcess& server = shared_server();
  ClientOptions shm_options;
  shm_options.address = server.unix_address();
  const std::string name = unique("stream");
  constexpr int kQueue = 3, kManySteps = 40;
  // 12300-13299 doubles: 98400-106392 bytes, one size class (106496 bytes).
  auto count_of = [](int step) { return std::uint64_t{12300} + (step * 97) % 1000; };
  auto value = [](int step, std::uint64_t i) { return step * 1e6 + static_cast<double>(i); };
  std::atomic<int> wrong{0}, steps{0}, shared{0};
  std::atomic<std::int64_t> segments_made{0};
  auto read_group = [&](const ClientOptions& options, const char* group) {
    StreamReader reader(options, name, group, 0, 1);
    Client info(options);
    for (;;) {
      StreamNext next = reader.next_step();
      if (next.kind != StreamNext::Kind::kStep) break;
      ++steps;
      const int step = static_cast<int>(next.step->number());
      std::uint64_t seen = 0;
      for (const StreamPiece& piece : next.step->load("particles/e/position/x")) {
        shared += piece.shared ? 1 : 0;
        const auto values = piece.as<double>();
        for (std::size_t i = 0; i < values.size(); ++i) {
          if (values[i] != value(step, piece.piece.offset[0] + i)) ++wrong;
        }
        seen += values.size();
      }
      if (seen != count_of(step)) ++wrong;
      next.step->release();
      segments_made = std::max<std::int64_t>(segments_made,
                                             stream_info_field(info, name, "segments_made"));
    }
  };
  std::thread over_shm(read_group, shm_options, "shm");
  std::thread over_tcp(read_group, options_for(server), "tcp");
  try {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 2;
    writer_options.queue_limit = kQueue;
    StreamWriter writer(shm_options, name, 0, 1, writer_options);
    std::vector<double> x;
    for (int step = 0; step < kManySteps; ++step) {
      const std::uint64_t count = count_of(step);
      const std::vector<std::uint64_t> global{count}, offset{0}, extent{count};
      writer.begin_step(step);
      if (step % 2 == 0) {
        x.resize(count);
        for (std::uint64_t i = 0; i < count; ++i) x[i] = value(step, i);
        writer.put_chunk<double>("particles/e/position/x", global, offset, extent, x);
      } else {
        std::span<std::byte> loan = writer.loan_chunk("particles/e/position/x", DType::kFloat64,
                                                      global, offset, extent);
        EXPECT_EQ(loan.size(), count * sizeof(double));
        auto* into = reinterpret_cast<double*>(loan.data());
        for (std::uint64_t i = 0; i < count && i < loan.size() / sizeof(double); ++i) {
          into[i] = value(step, i);
        }
      }
      writer.end_step();
    }
    writer.close();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "writer: " << e.what();  // its readers see the stream end
  }
  over_shm.join();
  over_tcp.join();
  EXPECT_EQ(steps.load(), 2 * kManySteps);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(shared.load(), kManySteps);  // the shared-memory group's pieces are mapped
  EXPECT_GT(segments_made.load(), 0);
  EXPECT_LE(segments_made.load(), kQueue) << "segments made in " << kManySteps << " steps";
}

// end_step reserves the writer's next step (the last step plus the last stride) when a slot is
// free, so that begin_step of it sends nothing: the reserved step is held from the END on. A
// begin of another step withdraws the reservation, and so does closing; readers never see a
// reserved step that was not used (no skipped step, nothing aborted or discarded).
TEST(StreamClient, EndReservesTheNextStepAndAWrongGuessLeavesNoTrace) {
  ServerProcess& server = shared_server();
  for (const bool shared_memory : {false, true}) {
    ClientOptions options;
    options.address = shared_memory ? server.unix_address() : server.tcp_address();
    const std::string name = unique("stream");
    Client info(options);
    auto field = [&](std::string_view wanted) { return stream_info_field(info, name, wanted); };
    StreamWriterOptions writer_options;
    writer_options.queue_limit = 4;
    writer_options.expected_groups = 1;
    writer_options.shared_memory_min_bytes = 1;
    writer_options.step_timeout = std::chrono::milliseconds(60000);
    StreamWriter writer(options, name, 0, 1, writer_options);
    StreamReader reader(options, name, "g", 0, 1);
    std::vector<double> values(512);
    const std::vector<std::uint64_t> global{512}, offset{0}, extent{512};
    auto write = [&](std::int64_t step) {
      writer.begin_step(step);
      std::fill(values.begin(), values.end(), static_cast<double>(step));
      writer.put_chunk<double>("meshes/rho", global, offset, extent, values);
      writer.end_step();
    };
    write(0);
    EXPECT_EQ(field("steps_held"), 2);  // 0, and 1 reserved
    write(1);
    write(5);                           // not the guess (2): the reservation of 2 is withdrawn
    EXPECT_EQ(field("steps_held"), 4);  // 0, 1, 5, and 9 reserved (stride 4)
    std::vector<std::int64_t> seen;
    for (int i = 0; i < 3; ++i) {
      StreamNext next = reader.next_step();
      ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
      seen.push_back(next.step->number());
      for (const StreamPiece& piece : next.step->load("meshes/rho")) {
        EXPECT_EQ(piece.as<double>()[0], static_cast<double>(next.step->number()));
      }
    }
    write(9);                           // the guess: begun without a round trip
    writer.close();                     // withdraws the reservation of 13
    for (;;) {
      StreamNext next = reader.next_step();
      if (next.kind != StreamNext::Kind::kStep) {
        EXPECT_EQ(next.kind, StreamNext::Kind::kEnd) << "skipped " << next.skipped_step;
        break;
      }
      seen.push_back(next.step->number());
    }
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 5, 9})) << "shared memory " << shared_memory;
    EXPECT_EQ(field("steps_aborted"), 0);
    EXPECT_EQ(field("steps_completed"), 4);
  }
}

// A reserved step's timeout starts when the writer uses it, not at the END that reserved it: a
// simulation computing longer than the step timeout between two steps loses nothing.
TEST(StreamClient, AReservedStepTimesOutOnlyOnceItIsUsed) {
  ServerProcess& server = shared_server();
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  writer_options.step_timeout = std::chrono::milliseconds(1500);
  StreamWriter writer(options_for(server), name, 0, 1, writer_options);
  StreamReader reader(options_for(server), name, "g", 0, 1);
  const std::vector<double> values(8, 1.0);
  const std::vector<std::uint64_t> global{8}, offset{0}, extent{8};
  for (std::int64_t step = 0; step < 2; ++step) {
    writer.begin_step(step);
    writer.put_chunk<double>("meshes/rho", global, offset, extent, values);
    EXPECT_TRUE(writer.end_step()) << writer.last_abort_reason();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // "compute"
  }
  writer.close();
  for (std::int64_t step = 0; step < 2; ++step) {
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << next.reason;
    EXPECT_EQ(next.step->number(), step);
  }
  EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
}

TEST(StreamClient, WriterThatClosesMidStepAbortsTheStepWithItsReason) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamReaderOptions reader_options;
  reader_options.strategy = "roundrobin";
  StreamReader reader(options, name, "g", 0, 1, reader_options);
  StreamWriter survivor(options, name, 0, 2);
  std::optional<StreamWriter> leaving(std::in_place, options, name, 1, 2);
  survivor.begin_step(0);
  leaving->begin_step(0);
  const std::vector<std::uint64_t> global = {2}, offset = {0}, extent = {1};
  const std::vector<float> one = {1.0f};
  survivor.put_chunk<float>("meshes/rho", global, offset, extent, one);
  survivor.end_step();
  leaving.reset();  // closes without ending step 0
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kSkipped);
  EXPECT_EQ(next.skipped_step, 0);
  EXPECT_NE(next.reason.find("writer 1"), std::string::npos) << next.reason;
  // The survivor goes on alone.
  survivor.begin_step(1);
  survivor.put_chunk<float>("meshes/rho", global, offset, extent, one);
  survivor.end_step();
  next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  EXPECT_EQ(next.step->number(), 1);
  auto pieces = next.step->load("meshes/rho");
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].piece.source_rank, 0u);
}

// A writer's begin_step of the step its last END reserved sends nothing; closing inside that step
// (here by its destructor, as when an exception unwinds the simulation) must abort the step, not
// let it complete without the writer's chunks.
TEST(StreamClient, WriterThatClosesInsideAReservedStepAbortsIt) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.queue_limit = 4;  // a slot is always free to reserve
  StreamReader reader(options, name, "g", 0, 1);
  StreamWriter survivor(options, name, 0, 2, writer_options);
  std::optional<StreamWriter> leaving(std::in_place, options, name, 1, 2, writer_options);
  const std::vector<std::uint64_t> global = {2}, first = {0}, second = {1}, extent = {1};
  const std::vector<float> one = {1.0f};
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    StreamWriter& writer = rank == 0 ? survivor : *leaving;
    writer.begin_step(0);
    writer.put_chunk<float>("meshes/rho", global, rank == 0 ? first : second, extent, one);
    ASSERT_TRUE(writer.end_step());  // reserves step 1
  }
  leaving->begin_step(1);
  survivor.begin_step(1);
  survivor.put_chunk<float>("meshes/rho", global, first, extent, one);
  leaving.reset();  // closes inside step 1
  EXPECT_FALSE(survivor.end_step());
  EXPECT_NE(survivor.last_abort_reason().find("writer 1"), std::string::npos)
      << survivor.last_abort_reason();
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  EXPECT_EQ(next.step->number(), 0);
  next.step->release();
  next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kSkipped) << "step " << next.step->number();
  EXPECT_EQ(next.skipped_step, 1);
  EXPECT_NE(next.reason.find("writer 1"), std::string::npos) << next.reason;
}

// After an aborted step a writer's next reservation is the step after the one it begins next,
// not one too far: a reservation too far made its plain begin of the right step withdraw the other
// writers' reservations of the later step, and their chunks of it were refused ("has not begun").
TEST(StreamClient, AfterAnAbortedStepWritersReserveTheRightNextStep) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.queue_limit = 8;  // a slot is always free to reserve
  StreamReaderOptions reader_options;
  reader_options.next_timeout = std::chrono::seconds(20);
  reader_options.strategy = "roundrobin";  // whole chunks
  StreamReader reader(options, name, "g", 0, 1, reader_options);
  StreamWriter first(options, name, 0, 3, writer_options);
  StreamWriter second(options, name, 1, 3, writer_options);
  std::optional<StreamWriter> leaving(std::in_place, options, name, 2, 3, writer_options);
  const std::vector<std::uint64_t> global = {3}, extent = {1};
  auto write = [&](StreamWriter& writer, std::int64_t step) {
    const std::vector<std::uint64_t> offset = {writer.rank()};
    const std::vector<float> value = {static_cast<float>(step * 10 + writer.rank())};
    writer.begin_step(step);
    writer.put_chunk<float>("meshes/rho", global, offset, extent, value);
    return writer.end_step();
  };
  for (StreamWriter* writer : {&first, &second, &*leaving}) ASSERT_TRUE(write(*writer, 0));
  first.begin_step(1);
  second.begin_step(1);
  leaving->begin_step(1);
  leaving.reset();  // closes inside step 1: aborted
  EXPECT_FALSE(first.end_step());
  EXPECT_FALSE(second.end_step());
  // The first writer runs ahead by a step; the second's begin of step 3 must not take away the
  // first's reservation of step 4.
  EXPECT_TRUE(write(first, 2));
  EXPECT_TRUE(write(first, 3));  // incomplete until the second ends it
  EXPECT_TRUE(write(second, 2));
  EXPECT_TRUE(write(second, 3));
  EXPECT_TRUE(write(first, 4));
  EXPECT_TRUE(write(second, 4));
  for (std::int64_t expected : {0, 1, 2, 3, 4}) {
    StreamNext next = reader.next_step();
    if (expected == 1) {
      ASSERT_EQ(next.kind, StreamNext::Kind::kSkipped);
      EXPECT_EQ(next.skipped_step, 1);
      continue;
    }
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << "step " << expected;
    EXPECT_EQ(next.step->number(), expected);
    const std::size_t writers = expected == 0 ? 3 : 2;
    const std::vector<StreamPiece> pieces = next.step->load("meshes/rho");
    ASSERT_EQ(pieces.size(), writers) << "step " << expected;
    for (const StreamPiece& piece : pieces) {
      const std::int64_t rank = static_cast<std::int64_t>(piece.piece.offset.at(0));
      EXPECT_EQ(piece.as<float>()[0], static_cast<float>(expected * 10 + rank));
    }
    next.step->release();
  }
}

// Once a run has ended and every group has read it, a group that joins late is given the end
// (for Stream::kEndedRunKept, shown by SS.STREAM.INFO as kept_ms), not an empty stream that never
// ends; a new run's writers replace the ended run at once.
TEST(StreamClient, AGroupJoiningAfterTheEndIsGivenTheEnd) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  const std::vector<std::uint64_t> global = {1}, offset = {0};
  const std::vector<float> first_value = {1.0f}, second_value = {2.0f};
  {
    StreamReader first(options, name, "first", 0, 1);
    StreamWriter writer(options, name, 0, 1);
    writer.begin_step(0);
    writer.put_chunk<float>("meshes/rho", global, offset, global, first_value);
    ASSERT_TRUE(writer.end_step());
    writer.close();
    StreamNext next = first.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    next.step->release();
    ASSERT_EQ(first.next_step().kind, StreamNext::Kind::kEnd);
  }  // the first group leaves: every step released, nobody bound
  StreamReaderOptions late_options;
  late_options.next_timeout = std::chrono::seconds(20);  // a guard: the end comes at once
  {
    StreamReader late(options, name, "late", 0, 1, late_options);
    EXPECT_EQ(late.next_step().kind, StreamNext::Kind::kEnd);
  }
  {
    // A group of two whose second reader never comes: nothing is left to share, so no wait.
    StreamReader half(options, name, "half", 0, 2, late_options);
    EXPECT_EQ(half.next_step().kind, StreamNext::Kind::kEnd);
  }
  Client info(options);
  EXPECT_EQ(stream_info_field(info, name, "ended"), 1);
  const std::int64_t kept = stream_info_field(info, name, "kept_ms");
  EXPECT_GT(kept, 0);
  EXPECT_LE(kept, 60000);
  const Reply totals = info.command({"INFO", "streams"});
  EXPECT_NE(totals.string.find("streams_ended_kept:"), std::string::npos) << totals.string;
  // A new run's writer replaces the ended run at once; a group joining after it sees the new run.
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  StreamWriter writer(options, name, 0, 1, writer_options);
  StreamReader next_run(options, name, "next", 0, 1, late_options);
  writer.begin_step(0);
  writer.put_chunk<float>("meshes/rho", global, offset, global, second_value);
  ASSERT_TRUE(writer.end_step());
  writer.close();
  StreamNext next = next_run.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << next.reason;
  EXPECT_EQ(next.step->load("meshes/rho").at(0).as<float>()[0], 2.0f);
}

// A string field of a group in SS.STREAM.INFO ("" when it has none of that name).
std::string stream_group_field(Client& info, const std::string& stream, const std::string& group,
                               std::string_view field) {
  const Reply fields = info.command({"SS.STREAM.INFO", stream});
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    if (fields.elements[i].string != "groups") continue;
    for (const Reply& g : fields.elements[i + 1].elements) {
      std::map<std::string, std::string> named;
      for (std::size_t k = 0; k + 1 < g.elements.size(); k += 2) {
        named[g.elements[k].string] = g.elements[k + 1].string;
      }
      if (named["name"] == group) return named[std::string(field)];
    }
  }
  return "";
}

// Two readers of a group with round_robin: each is handed whole steps in turn (reader 0 the even
// steps, reader 1 the odd ones), is alone in each step's reader table, and loads every element of
// every component of its steps, each once, with the right value. A reader that asks for another
// distribution is refused.
TEST(StreamClient, RoundRobinReadersEachLoadTheirOwnWholeSteps) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamReaderOptions reader_options;
  reader_options.step_distribution = StepDistribution::kRoundRobin;
  reader_options.strategy = "blocks";  // any strategy: a whole step has one reader
  reader_options.next_timeout = std::chrono::seconds(60);  // a guard
  // Per reader, both made before the reader threads start: each thread then touches only its
  // own vector (inserting from two threads raced on the map, ThreadSanitizer's report).
  std::map<std::uint32_t, std::vector<int>> steps{{0, {}}, {1, {}}};
  std::atomic<int> wrong{0}, ends{0};
  auto read = [&](std::uint32_t rank, StreamReader& reader) {
    for (;;) {
      StreamNext next = reader.next_step();
      if (next.kind == StreamNext::Kind::kEnd) {
        ++ends;
        return;
      }
      if (next.kind != StreamNext::Kind::kStep) {
        ++wrong;
        return;
      }
      StreamStep& step = *next.step;
      const int number = static_cast<int>(step.number());
      if (step.readers() != std::vector<std::uint32_t>{rank} || step.index() != 0) ++wrong;
      std::vector<int> counts(kRows * kCols, 0);
      for (const StreamPiece& piece : step.load("meshes/E/x")) {
        const auto& p = piece.piece;
        const auto values = piece.as<double>();
        for (std::uint64_t r = 0; r < p.extent[0]; ++r) {
          for (std::uint64_t c = 0; c < p.extent[1]; ++c) {
            const std::uint64_t row = p.offset[0] + r, col = p.offset[1] + c;
            if (values[r * p.extent[1] + c] != field(number, row, col)) ++wrong;
            ++counts[row * kCols + col];
          }
        }
      }
      for (int count : counts) {
        if (count != 1) ++wrong;
      }
      std::uint64_t particles = 0;
      for (const StreamPiece& piece : step.load("particles/e/id")) {
        for (std::int32_t id : piece.as<std::int32_t>()) {
          if (id != number * 100 + static_cast<std::int32_t>(piece.piece.source_rank)) ++wrong;
        }
        particles += piece.piece.extent[0];
      }
      if (particles != kWriters * (kWriters + 1) / 2) ++wrong;
      steps.at(rank).push_back(number);
      step.release();
    }
  };
  StreamReader first(options, name, "whole", 0, 2, reader_options);
  StreamReaderOptions other = reader_options;
  other.step_distribution = StepDistribution::kOnDemand;
  try {
    StreamReader refused(options, name, "whole", 1, 2, other);
    ADD_FAILURE() << "a reader with another step distribution joined";
  } catch (const ServerError& e) {
    EXPECT_NE(std::string(e.what()).find("step distribution round_robin"), std::string::npos)
        << e.what();
  }
  StreamReader second(options, name, "whole", 1, 2, reader_options);
  Client info(options);
  EXPECT_EQ(stream_group_field(info, name, "whole", "distribution"), "round_robin");
  std::vector<std::thread> threads;
  threads.emplace_back([&] { read(0, first); });
  threads.emplace_back([&] { read(1, second); });
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  for (std::uint32_t w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] { write_stream(options, name, w, writer_options); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ends.load(), 2);
  EXPECT_EQ(steps[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(steps[1], (std::vector<int>{1, 3}));
}

// first_step_precious: the first step is kept for the stream's life, so a group that joins after
// the run has ended (and been read) is handed step 0, then the end; INFO shows it.
TEST(StreamClient, APreciousFirstStepReachesAGroupThatJoinsLate) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.first_step_precious = true;
  writer_options.queue_limit = 1;
  {
    StreamReader first(options, name, "first", 0, 1);
    StreamWriter writer(options, name, 0, 1, writer_options);
    for (int step = 0; step < 3; ++step) {
      const std::vector<float> value = {static_cast<float>(step)};
      const std::vector<std::uint64_t> one = {1}, zero = {0};
      writer.begin_step(step);  // queue limit 1: would wait forever if step 0 kept its slot
      writer.put_chunk<float>("meshes/rho", one, zero, one, value);
      ASSERT_TRUE(writer.end_step());
      StreamNext next = first.next_step();
      ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
      EXPECT_EQ(next.step->number(), step);
      next.step->release();
    }
    writer.close();
    EXPECT_EQ(first.next_step().kind, StreamNext::Kind::kEnd);
  }
  Client info(options);
  EXPECT_EQ(stream_info_field(info, name, "precious_step"), 0);
  EXPECT_GT(stream_info_field(info, name, "precious_bytes"), 0);
  EXPECT_EQ(stream_info_field(info, name, "steps_held"), 0);
  EXPECT_EQ(stream_info_field(info, name, "ended"), 1);
  StreamReaderOptions late_options;
  late_options.start = StreamReaderOptions::Start::kNewest;
  late_options.next_timeout = std::chrono::seconds(20);  // a guard: both come at once
  StreamReader late(options, name, "late", 0, 1, late_options);
  StreamNext next = late.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << next.reason;
  EXPECT_EQ(next.step->number(), 0);
  EXPECT_EQ(next.step->load("meshes/rho").at(0).as<float>()[0], 0.0f);
  next.step->release();
  EXPECT_EQ(late.next_step().kind, StreamNext::Kind::kEnd);
  // A writer that does not agree is refused.
  StreamWriterOptions plain = writer_options;
  plain.first_step_precious = false;
  StreamWriter keeper(options, name + ".agree", 0, 2, writer_options);
  try {
    StreamWriter refused(options, name + ".agree", 1, 2, plain);
    ADD_FAILURE() << "a writer without first_step_precious attached";
  } catch (const ServerError& e) {
    EXPECT_NE(std::string(e.what()).find("FIRST-STEP-PRECIOUS yes"), std::string::npos) << e.what();
  }
}

// An attribute's declared element type reaches readers with its value (an unsigned 64-bit value
// as its two's complement), stream-level and per step; a name the server does not know is
// refused with the list of those it does.
TEST(StreamClient, AttributesKeepTheElementTypeTheirWriterDeclared) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamReaderOptions reader_options;
  reader_options.next_timeout = std::chrono::seconds(20);
  StreamReader reader(options, name, "g", 0, 1, reader_options);
  StreamWriter writer(options, name, 0, 1);
  writer.set_stream_attribute("/", "ranks", std::int64_t{4}, "UINT");
  writer.begin_step(0);
  writer.set_attribute("/", "time", 0.25, "FLOAT");
  writer.set_attribute("meshes/E", "unitDimension", std::vector<double>{1, 1, -3, -1, 0, 0, 0},
                       "ARR_DBL_7");
  writer.set_attribute("meshes/E", "big", static_cast<std::int64_t>(~std::uint64_t{0}), "ULONG");
  writer.set_attribute("meshes/E", "plain", std::int64_t{7});
  const std::vector<std::uint64_t> global = {2}, offset = {0};
  const std::vector<float> values = {1, 2};  // borrowed until end_step
  writer.put_chunk<float>("meshes/E/x", global, offset, global, values);
  ASSERT_TRUE(writer.end_step());
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  auto find = [&](const std::string& path, const std::string& attribute) {
    for (const StreamAttribute& a : next.step->attributes()) {
      if (a.path == path && a.name == attribute) return a;
    }
    ADD_FAILURE() << "no attribute " << path << "@" << attribute;
    return StreamAttribute{};
  };
  EXPECT_EQ(find("/", "ranks").element, "UINT");
  EXPECT_EQ(find("/", "ranks").step, -1);
  EXPECT_EQ(find("/", "time").element, "FLOAT");
  EXPECT_EQ(find("meshes/E", "unitDimension").element, "ARR_DBL_7");
  const StreamAttribute big = find("meshes/E", "big");
  EXPECT_EQ(big.element, "ULONG");
  EXPECT_EQ(static_cast<std::uint64_t>(std::get<std::int64_t>(big.value)), ~std::uint64_t{0});
  EXPECT_EQ(find("meshes/E", "plain").element, "");
  next.step->release();

  writer.begin_step(1);
  writer.set_attribute("/", "time", std::int64_t{1}, "FLOAT");  // not an integer element type
  try {
    writer.end_step();
    ADD_FAILURE() << "an unknown element type was accepted";
  } catch (const ServerError& e) {
    EXPECT_NE(std::string(e.what()).find("ULONGLONG or BOOL"), std::string::npos) << e.what();
  }
}

// Stream-level attributes reach every step a reader gets, though the server sends them to each
// reader only with its first step and when they change; a reader that joins later gets them too.
TEST(StreamClient, StreamAttributesComeWithEveryStepAndTheirChanges) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  StreamReaderOptions reader_options;
  reader_options.next_timeout = std::chrono::seconds(20);
  StreamReader early(options, name, "early", 0, 1, reader_options);
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  StreamWriter writer(options, name, 0, 1, writer_options);
  writer.set_stream_attribute("/", "software", std::string("v1"));
  writer.set_stream_attribute("/", "basePath", std::string("/data/%T/"));
  const std::vector<std::uint64_t> global = {2}, offset = {0};
  const std::vector<float> values = {1, 2};  // borrowed until end_step
  // The stream-level attributes of a step, in order, then the step's own.
  auto seen = [](const StreamStep& step) {
    std::vector<std::string> out;
    for (const StreamAttribute& a : step.attributes()) {
      out.push_back(std::to_string(a.step) + " " + a.name + "=" +
                    (a.name == "time" ? std::to_string(std::get<double>(a.value))
                                      : std::get<std::string>(a.value)));
    }
    return out;
  };
  // Each step read before the next is written: a stream-level attribute is the stream's value
  // when the step is handed out.
  for (std::int64_t step = 0; step < 4; ++step) {
    writer.begin_step(step);
    if (step == 2) writer.set_stream_attribute("/", "software", std::string("v2"));
    writer.set_attribute("/", "time", 0.5 * static_cast<double>(step));
    writer.put_chunk<float>("meshes/E/x", global, offset, global, values);
    ASSERT_TRUE(writer.end_step());
    StreamNext next = early.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    const std::string software = step < 2 ? "v1" : "v2";
    EXPECT_EQ(seen(*next.step),
              (std::vector<std::string>{"-1 software=" + software, "-1 basePath=/data/%T/",
                                        std::to_string(step) + " time=" +
                                            std::to_string(0.5 * static_cast<double>(step))}))
        << "step " << step;
    next.step->release();
  }
  // A group that joins now sees them with its first step.
  StreamReader late(options, name, "late", 0, 1, reader_options);
  writer.begin_step(4);
  writer.put_chunk<float>("meshes/E/x", global, offset, global, values);
  ASSERT_TRUE(writer.end_step());
  StreamNext first = late.next_step();
  ASSERT_EQ(first.kind, StreamNext::Kind::kStep);
  const std::vector<std::string> got = seen(*first.step);
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(got[0], "-1 software=v2");
  EXPECT_EQ(got[1], "-1 basePath=/data/%T/");
}

// An attribute value is built from any arithmetic type and vectors of them, as a simulation holds
// its sizes and counts (std::size_t, unsigned, int), and from C strings; an unsigned value that
// int64 cannot hold is refused, not wrapped.
TEST(StreamClient, AttributeValuesComeFromEveryArithmeticType) {
  const std::size_t cells = 128;
  EXPECT_EQ(std::get<std::int64_t>(AttributeValue(cells)), 128);
  EXPECT_EQ(std::get<std::int64_t>(AttributeValue(std::uint64_t{1} << 40)), std::int64_t{1} << 40);
  EXPECT_EQ(std::get<std::int64_t>(AttributeValue(-3)), -3);
  EXPECT_EQ(std::get<std::int64_t>(AttributeValue(true)), 1);
  EXPECT_EQ(std::get<double>(AttributeValue(0.5f)), 0.5);
  EXPECT_EQ(std::get<std::string>(AttributeValue("cm")), "cm");
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(AttributeValue(std::vector<int>{1, -2, 3})),
            (std::vector<std::int64_t>{1, -2, 3}));
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(AttributeValue(std::vector<std::size_t>{4, 5})),
            (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(std::get<std::vector<double>>(AttributeValue(std::vector<float>{0.25f, 1})),
            (std::vector<double>{0.25, 1}));
  EXPECT_EQ(AttributeValue(std::vector<std::string>{"x", "y"}).index(), 3u);
  EXPECT_THROW(AttributeValue(~std::uint64_t{0}), std::out_of_range);
  EXPECT_THROW(AttributeValue(std::vector<std::uint64_t>{1, ~std::uint64_t{0}}), std::out_of_range);
  const AttributeValue visited = std::int64_t{9};
  EXPECT_EQ(std::visit([](const auto& v) { return sizeof(v) > 0; }, visited), true);
}

TEST(StreamClient, MisuseIsReportedBeforeOrByTheServer) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string name = unique("stream");
  EXPECT_THROW(StreamWriter(options, name, 2, 2), InvalidArgumentError);
  StreamReaderOptions bad;
  bad.strategy = "hostname_nosuch_discard";
  EXPECT_THROW(StreamReader(options, name, "g", 0, 1, bad), InvalidArgumentError);
  StreamWriter writer(options, name, 0, 1);
  EXPECT_THROW(writer.end_step(), InvalidArgumentError);
  writer.begin_step(3);
  const std::vector<std::uint64_t> global = {4}, offset = {0}, extent = {2};
  const std::vector<float> three = {1, 2, 3};
  EXPECT_THROW(writer.put_chunk<float>("meshes/rho", global, offset, extent, three),
               InvalidArgumentError);
  writer.end_step();
  EXPECT_THROW(writer.begin_step(2), ServerError);  // step numbers must increase
}

// end_step sends the chunks and END in one round trip: a chunk the server refuses fails the
// step's END too, so no reader ever sees the step without it; the step stays open, and putting
// the chunk again and ending the step delivers it whole. Over TCP and over shared memory.
TEST(StreamClient, RefusedChunkKeepsTheStepOpenAndInvisible) {
  ServerProcess& server = shared_server();
  for (const std::string& address : {server.tcp_address(), server.unix_address()}) {
    ClientOptions options;
    options.address = address;
    const std::string name = unique("stream");
    StreamWriterOptions writer_options;
    writer_options.shared_memory_min_bytes = 1;
    StreamWriter writer(options, name, 0, 1, writer_options);
    StreamReaderOptions reader_options;
    reader_options.next_timeout = std::chrono::milliseconds(200);
    StreamReader reader(options, name, "g", 0, 1, reader_options);
    writer.begin_step(0);
    const std::vector<std::uint64_t> global = {4}, inside = {0}, outside = {3}, extent = {2};
    const std::vector<float> good = {1, 2}, bad = {7, 7};
    writer.put_chunk<float>("meshes/rho", global, inside, extent, good);
    writer.put_chunk<float>("meshes/rho", global, outside, extent, bad);  // past the end
    try {
      writer.end_step();
      ADD_FAILURE() << "a chunk outside the global extent was accepted";
    } catch (const ServerError& e) {
      EXPECT_NE(std::string(e.what()).find("outside the global extent"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kTimeout) << address;  // not visible
    const std::vector<std::uint64_t> rest = {2};
    const std::vector<float> more = {3, 4};
    writer.put_chunk<float>("meshes/rho", global, rest, extent, more);
    writer.end_step();
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << address;
    std::vector<float> seen(4, 0);
    for (const StreamPiece& piece : next.step->load("meshes/rho")) {
      auto values = piece.as<float>();
      for (std::size_t i = 0; i < values.size(); ++i) seen[piece.piece.offset[0] + i] += values[i];
    }
    EXPECT_EQ(seen, (std::vector<float>{1, 2, 3, 4})) << address;
  }
}

// loan_chunk: the writer fills the region it is lent; over shared memory that region is the
// segment the reader maps (no copy anywhere), over TCP it is sent on the socket. Same values
// either way, step after step (the segments are reused).
TEST(StreamClient, LoanedChunksArriveOverBothPaths) {
  ServerProcess& server = shared_server();
  for (const std::string& address : {server.tcp_address(), server.unix_address()}) {
    ClientOptions options;
    options.address = address;
    const std::string name = unique("stream");
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    StreamWriter writer(options, name, 0, 1, writer_options);
    StreamReader reader(options, name, "g", 0, 1);
    constexpr std::uint64_t kCount = 32 * 1024;  // 256 KiB of doubles
    const std::vector<std::uint64_t> global{2 * kCount}, first{0}, second{kCount}, extent{kCount};
    for (int step = 0; step < 4; ++step) {
      writer.begin_step(step);
      for (const auto& offset : {first, second}) {
        std::span<double> into = writer.loan_chunk<double>("meshes/rho", global, offset, extent);
        ASSERT_EQ(into.size(), kCount);
        for (std::uint64_t i = 0; i < kCount; ++i) {
          into[i] = step * 1e6 + static_cast<double>(offset[0] + i);
        }
      }
      writer.end_step();
      StreamNext next = reader.next_step();
      ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << address;
      std::uint64_t checked = 0;
      for (const StreamPiece& piece : next.step->load("meshes/rho")) {
        EXPECT_EQ(piece.shared, address == server.unix_address()) << address;
        auto values = piece.as<double>();
        for (std::uint64_t i = 0; i < values.size(); ++i) {
          ASSERT_EQ(values[i], step * 1e6 + static_cast<double>(piece.piece.offset[0] + i));
          ++checked;
        }
      }
      EXPECT_EQ(checked, 2 * kCount);
    }
    writer.close();
    EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
  }
}

// A TCP reader naming one 4 MiB chunk of a writer segment 32 times in one SS.STREAM.GET: the chunk
// is copied once for the reply (and the copy counted against --maxmemory), not once per id, so
// the server does not grow by 128 MiB under a 64 MiB limit.
TEST(StreamClient, AChunkNamedManyTimesInOneGetIsCopiedOnce) {
  ServerProcess server({"--maxmemory", std::to_string(64 << 20)});
  ClientOptions shm_options;
  shm_options.address = server.unix_address();
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  StreamWriter writer(shm_options, name, 0, 1, writer_options);
  constexpr std::uint64_t kCount = 1 << 20;  // 4 MiB of floats
  std::vector<float> values(kCount);
  for (std::uint64_t i = 0; i < kCount; ++i) values[i] = static_cast<float>(i % 1000);
  const std::vector<std::uint64_t> global{kCount}, offset{0};
  writer.begin_step(0);
  writer.put_chunk<float>("meshes/rho", global, offset, global, values);
  ASSERT_TRUE(writer.end_step());
  Client reader(options_for(server));
  ASSERT_FALSE(reader.command({"SS.STREAM.JOIN", name, "g", "0", "1", "host"}).is_error());
  const Reply next = reader.command({"SS.STREAM.NEXT", name, "g", "0", "TIMEOUT", "20000"});
  ASSERT_TRUE(next.is_array()) << next.string;
  const std::size_t before = peak_resident_bytes(server.pid());
  constexpr int kIds = 32;
  std::vector<std::string_view> get = {"SS.STREAM.GET", name, "g", "0", "0"};
  for (int i = 0; i < kIds; ++i) get.push_back("0");
  const Reply chunks = reader.command(get);
  ASSERT_TRUE(chunks.is_array()) << chunks.string;
  ASSERT_EQ(chunks.elements.size(), static_cast<std::size_t>(kIds));
  const std::string_view expected(reinterpret_cast<const char*>(values.data()), kCount * 4);
  for (const Reply& chunk : chunks.elements) ASSERT_TRUE(chunk.string == expected);
  const std::size_t after = peak_resident_bytes(server.pid());
  ASSERT_GT(before, 0u);
  EXPECT_LT(growth_between(before, after), std::size_t{48} << 20)
      << "the server's peak grew from " << before << " to " << after << " bytes";
}

// BUG (issue 26.C4): a reply carrying more than 253 descriptors (the kernel's limit per message)
// lost all but the last batch: the batches past the first were sent with no byte of their reply,
// and the kernel drops descriptors sent with none. A writer of 300 chunks of 64 KiB a step gets
// 300 segments with one END reply; every step must arrive whole.
TEST(StreamClient, AReplyWithMoreDescriptorsThanOneMessageCarriesLosesNone) {
  ServerProcess server;
  ClientOptions shm_options;
  shm_options.address = server.unix_address();
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  writer_options.queue_limit = 2;
  StreamReaderOptions reader_options;
  reader_options.strategy = "roundrobin";
  reader_options.next_timeout = std::chrono::seconds(60);
  constexpr std::uint64_t kChunks = 300, kPerChunk = 16384;  // 64 KiB of floats each
  constexpr int kSteps = 3;
  auto write_chunks = [&] {
    StreamWriter writer(shm_options, name, 0, 1, writer_options);
    std::vector<std::vector<float>> values(kChunks, std::vector<float>(kPerChunk));
    const std::vector<std::uint64_t> global{kChunks * kPerChunk}, extent{kPerChunk};
    for (int step = 0; step < kSteps; ++step) {
      writer.begin_step(step);
      for (std::uint64_t c = 0; c < kChunks; ++c) {  // borrowed until end_step
        std::fill(values[c].begin(), values[c].end(), static_cast<float>(step * 1000 + c));
        const std::vector<std::uint64_t> offset{c * kPerChunk};
        writer.put_chunk<float>("meshes/rho", global, offset, extent, values[c]);
      }
      if (!writer.end_step()) throw std::runtime_error(writer.last_abort_reason());
    }
    writer.close();
  };
  std::string failed;
  std::thread writing([&] {
    try {
      write_chunks();
    } catch (const std::exception& e) {
      failed = e.what();
    }
  });
  StreamReader reader(shm_options, name, "g", 0, 1, reader_options);
  int shared = 0;
  for (int step = 0; step < kSteps; ++step) {
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << next.reason;
    const std::vector<StreamPiece> pieces = next.step->load("meshes/rho");
    ASSERT_EQ(pieces.size(), kChunks);
    for (const StreamPiece& piece : pieces) {
      const float expected = static_cast<float>(step * 1000 + piece.piece.offset[0] / kPerChunk);
      const std::span<const float> got = piece.as<float>();
      ASSERT_EQ(got.size(), kPerChunk);
      ASSERT_EQ(got.front(), expected);
      ASSERT_EQ(got.back(), expected);
      shared += piece.shared ? 1 : 0;
    }
  }
  EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
  writing.join();
  EXPECT_EQ(failed, "");
  EXPECT_GT(shared, 0) << "no chunk travelled in a writer segment";
}

// The SST rendezvous trap: two processes (here threads) each write one stream and read the other,
// opening them in opposite orders. Attaching never waits for the other side, so neither blocks:
// each writes its steps, then reads the other's.
TEST(StreamClient, OpeningSeveralStreamsInAnyOrderDoesNotDeadlock) {
  ServerProcess& server = shared_server();
  const ClientOptions options = options_for(server);
  const std::string a = unique("stream-a"), b = unique("stream-b");
  std::atomic<int> steps_read{0};
  auto party = [&](const std::string& mine, const std::string& theirs, bool reader_first) {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;  // keep the steps until the other side's reader joins
    StreamReaderOptions reader_options;
    reader_options.next_timeout = std::chrono::milliseconds(10000);
    std::optional<StreamReader> reader;
    std::optional<StreamWriter> writer;
    if (reader_first) reader.emplace(options, theirs, "g", 0, 1, reader_options);
    writer.emplace(options, mine, 0, 1, writer_options);
    if (!reader_first) reader.emplace(options, theirs, "g", 0, 1, reader_options);
    const std::vector<std::uint64_t> global{1}, offset{0}, extent{1};
    const std::vector<std::int64_t> value{42};
    for (int step = 0; step < 2; ++step) {
      writer->begin_step(step);
      writer->put_chunk<std::int64_t>("meshes/n", global, offset, extent, value);
      writer->end_step();
    }
    writer->close();
    for (;;) {
      StreamNext next = reader->next_step();
      if (next.kind != StreamNext::Kind::kStep) {
        EXPECT_EQ(next.kind, StreamNext::Kind::kEnd);
        break;
      }
      ++steps_read;
    }
  };
  std::thread first(party, a, b, true), second(party, b, a, false);
  first.join();
  second.join();
  EXPECT_EQ(steps_read.load(), 4);
}

// A step with more chunks in segments than NEXT passes descriptors for (64): the reader asks for
// the rest with VIEW; every element arrives, every piece a mapped view.
TEST(StreamClient, ManySharedChunksAreViewedWhenNextDoesNotMapThem) {
  ServerProcess& server = shared_server();
  ClientOptions options;
  options.address = server.unix_address();
  const std::string name = unique("stream");
  StreamWriterOptions writer_options;
  writer_options.shared_memory_min_bytes = 1;
  writer_options.expected_groups = 1;
  StreamWriter writer(options, name, 0, 1, writer_options);
  StreamReader reader(options, name, "g", 0, 1);
  constexpr std::uint64_t kChunks = 100;
  const std::vector<std::uint64_t> global{kChunks}, extent{1};
  for (int step = 0; step < 2; ++step) {
    writer.begin_step(step);
    for (std::uint64_t i = 0; i < kChunks; ++i) {
      const std::vector<std::uint64_t> offset{i};
      writer.loan_chunk<std::int64_t>("particles/e/id", global, offset, extent)[0] =
          static_cast<std::int64_t>(step * 1000 + i);
    }
    EXPECT_TRUE(writer.end_step());
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    std::vector<int> seen(kChunks, 0);
    for (const StreamPiece& piece : next.step->load("particles/e/id")) {
      EXPECT_TRUE(piece.shared);
      const std::uint64_t at = piece.piece.offset[0];
      EXPECT_EQ(piece.as<std::int64_t>()[0], static_cast<std::int64_t>(step * 1000 + at));
      ++seen[at];
    }
    EXPECT_EQ(seen, std::vector<int>(kChunks, 1));
  }
}

// ---- Loading any box: StreamStep::load_box and load_boxes ---------------------------------------

constexpr std::uint64_t kBoxRows = 8, kBoxCols = 6, kIds = 10, kRho = 10;

// The values the writers put: meshes/E/x at (row, col), particles/e/id at i, meshes/rho at i.
double box_field(std::uint64_t row, std::uint64_t col) {
  return 1000.5 + static_cast<double>(row * kBoxCols + col);
}
std::int32_t box_id(std::uint64_t i) { return 100 + static_cast<std::int32_t>(i); }
double box_rho(std::uint64_t i) { return 0.25 + static_cast<double>(i); }

// Writer `rank` of 2 writes step 0: meshes/E/x (8 x 6 float64), writer 0 rows 0-3 as one chunk,
// writer 1 rows 4-7 as two chunks of 3 columns; particles/e/id (10 int32), writer 0 elements
// 0-3, writer 1 elements 4-9; meshes/rho (10 float64), only elements 0-3, by writer 0.
void write_box_step(StreamWriter& writer) {
  const std::uint32_t rank = writer.rank();
  writer.begin_step(0);
  const std::vector<std::uint64_t> global{kBoxRows, kBoxCols};
  std::vector<std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>> chunks;
  if (rank == 0) {
    chunks = {{{0, 0}, {4, kBoxCols}}};
  } else {
    chunks = {{{4, 0}, {4, 3}}, {{4, 3}, {4, 3}}};
  }
  for (const auto& [offset, extent] : chunks) {
    std::span<double> into = writer.loan_chunk<double>("meshes/E/x", global, offset, extent);
    for (std::uint64_t r = 0; r < extent[0]; ++r) {
      for (std::uint64_t c = 0; c < extent[1]; ++c) {
        into[r * extent[1] + c] = box_field(offset[0] + r, offset[1] + c);
      }
    }
  }
  const std::vector<std::uint64_t> ids_global{kIds}, ids_offset{rank == 0 ? 0u : 4u},
      ids_extent{rank == 0 ? 4u : 6u};
  std::span<std::int32_t> ids =
      writer.loan_chunk<std::int32_t>("particles/e/id", ids_global, ids_offset, ids_extent);
  for (std::uint64_t i = 0; i < ids.size(); ++i) ids[i] = box_id(ids_offset[0] + i);
  if (rank == 0) {
    const std::vector<std::uint64_t> rho_global{kRho}, rho_offset{0}, rho_extent{4};
    std::span<double> rho =
        writer.loan_chunk<double>("meshes/rho", rho_global, rho_offset, rho_extent);
    for (std::uint64_t i = 0; i < rho.size(); ++i) rho[i] = box_rho(i);
  }
  ASSERT_TRUE(writer.end_step());
}

// The elements of `got`, the row-major box of meshes/E/x at `offset` with `extent`, that are not
// what the writers put.
int wrong_field(const std::vector<double>& got, const std::vector<std::uint64_t>& offset,
                const std::vector<std::uint64_t>& extent) {
  int wrong = got.size() == extent[0] * extent[1] ? 0 : 1;
  for (std::uint64_t r = 0; r < extent[0] && wrong == 0; ++r) {
    for (std::uint64_t c = 0; c < extent[1]; ++c) {
      if (got[r * extent[1] + c] != box_field(offset[0] + r, offset[1] + c)) ++wrong;
    }
  }
  return wrong;
}

// The elements of `got`, the box of particles/e/id from `offset`, that are not what was put.
int wrong_ids(const std::vector<std::int32_t>& got, std::uint64_t offset) {
  int wrong = 0;
  for (std::uint64_t i = 0; i < got.size(); ++i) wrong += got[i] == box_id(offset + i) ? 0 : 1;
  return wrong;
}

// Reader 0 of a roundrobin group of 2 is given part of each component, yet loads any box of them:
// the whole global extent, a box across both writers' chunks, a box inside one chunk, and boxes
// of two components in one call; each element as the writers put it. Elements no chunk covers
// keep what the destination held. Bad boxes are refused before anything is copied. Over TCP and
// over shared memory.
TEST(StreamClient, AnyBoxOfAnyComponentLoadsInOneCall) {
  ServerProcess& server = shared_server();
  for (const std::string& address : {server.tcp_address(), server.unix_address()}) {
    SCOPED_TRACE(address);
    ClientOptions options;
    options.address = address;
    const std::string name = unique(address == server.tcp_address() ? "tcp" : "unix");
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    writer_options.shared_memory_min_bytes = 1;  // over the Unix socket, every chunk in a segment
    StreamWriter first(options, name, 0, 2, writer_options);
    StreamWriter second(options, name, 1, 2, writer_options);
    StreamReaderOptions reader_options;
    reader_options.strategy = "roundrobin";
    reader_options.next_timeout = std::chrono::seconds(20);
    StreamReader reader(options, name, "g", 0, 2, reader_options);
    StreamReader other(options, name, "g", 1, 2, reader_options);  // joins; never reads
    write_box_step(first);
    write_box_step(second);
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep) << next.reason;
    StreamStep& step = *next.step;
    // This reader's share is part of each component only.
    ASSERT_NE(step.component("meshes/E/x"), nullptr);
    std::uint64_t share = 0;
    for (const stream::Chunk& piece : step.component("meshes/E/x")->mine) {
      share += piece.element_count();
    }
    EXPECT_LT(share, kBoxRows * kBoxCols);
    ASSERT_NE(step.component("particles/e/id"), nullptr);
    EXPECT_EQ(step.component("particles/e/id")->mine.size(), 1u);

    // (a) The whole global extent, of both components.
    const std::vector<std::uint64_t> origin{0, 0}, whole{kBoxRows, kBoxCols};
    std::vector<double> field(kBoxRows * kBoxCols, -1.0);
    step.load_box("meshes/E/x", origin, whole, field.data());
    EXPECT_EQ(wrong_field(field, origin, whole), 0);
    std::vector<std::int32_t> ids(kIds, -1);
    const std::vector<std::uint64_t> ids_origin{0}, ids_whole{kIds};
    step.load_box("particles/e/id", ids_origin, ids_whole, ids.data());
    EXPECT_EQ(wrong_ids(ids, 0), 0);

    // (b) Across the three chunks of both writers: rows 2-5, columns 1-4.
    const std::vector<std::uint64_t> across_at{2, 1}, across{4, 4};
    std::vector<double> crossing(16, -1.0);
    step.load_box("meshes/E/x", across_at, across, crossing.data());
    EXPECT_EQ(wrong_field(crossing, across_at, across), 0);

    // (c) Inside one chunk (writer 1's second, which this reader's share does hold) and inside
    // one this reader was not given (writer 1's first); and inside writer 1's particles.
    for (const std::vector<std::uint64_t>& at : {std::vector<std::uint64_t>{5, 3},
                                                 std::vector<std::uint64_t>{5, 1}}) {
      const std::vector<std::uint64_t> small{2, 2};
      std::vector<double> inside(4, -1.0);
      step.load_box("meshes/E/x", at, small, inside.data());
      EXPECT_EQ(wrong_field(inside, at, small), 0) << at[1];
    }
    std::vector<std::int32_t> some_ids(3, -1);
    const std::vector<std::uint64_t> ids_at{5}, ids_three{3};
    step.load_box("particles/e/id", ids_at, ids_three, some_ids.data());
    EXPECT_EQ(wrong_ids(some_ids, 5), 0);

    // (d) Two components in one call (two boxes of one of them).
    std::vector<double> columns(6 * 3, -1.0), last_row(kBoxCols, -1.0);
    std::vector<std::int32_t> middle_ids(5, -1);
    const std::vector<StreamBox> boxes = {
        {"meshes/E/x", {1, 2}, {6, 3}, columns.data()},
        {"particles/e/id", {2}, {5}, middle_ids.data()},
        {"meshes/E/x", {kBoxRows - 1, 0}, {1, kBoxCols}, last_row.data()},
    };
    step.load_boxes(boxes);
    EXPECT_EQ(wrong_field(columns, {1, 2}, {6, 3}), 0);
    EXPECT_EQ(wrong_ids(middle_ids, 2), 0);
    EXPECT_EQ(wrong_field(last_row, {kBoxRows - 1, 0}, {1, kBoxCols}), 0);

    // Elements no chunk covers keep what the destination held.
    std::vector<double> rho(kRho, -1.0);
    const std::vector<std::uint64_t> rho_origin{0}, rho_whole{kRho};
    step.load_box("meshes/rho", rho_origin, rho_whole, rho.data());
    for (std::uint64_t i = 0; i < kRho; ++i) EXPECT_EQ(rho[i], i < 4 ? box_rho(i) : -1.0) << i;

    // Refused before anything is copied: an unknown component, a box past the global extent,
    // a box of the wrong dimensionality; a good box ahead of a bad one is not copied either.
    std::vector<double> untouched(kBoxRows * kBoxCols, -1.0);
    const std::vector<std::uint64_t> past_at{6, 0}, past{3, kBoxCols}, flat{kBoxRows * kBoxCols};
    EXPECT_THROW(step.load_box("meshes/B/x", origin, whole, untouched.data()),
                 InvalidArgumentError);
    EXPECT_THROW(step.load_box("meshes/E/x", past_at, past, untouched.data()),
                 InvalidArgumentError);
    EXPECT_THROW(step.load_box("meshes/E/x", ids_origin, flat, untouched.data()),
                 InvalidArgumentError);
    const std::vector<StreamBox> one_bad = {
        {"meshes/E/x", {0, 0}, {kBoxRows, kBoxCols}, untouched.data()},
        {"particles/e/id", {8}, {3}, ids.data()},
    };
    try {
      step.load_boxes(one_bad);
      ADD_FAILURE() << "a box past the global extent was accepted";
    } catch (const InvalidArgumentError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("step 0"), std::string::npos) << what;
      EXPECT_NE(what.find("particles/e/id"), std::string::npos) << what;
    }
    EXPECT_EQ(untouched, std::vector<double>(kBoxRows * kBoxCols, -1.0));
    step.release();
    EXPECT_THROW(step.load_box("meshes/E/x", origin, whole, untouched.data()),
                 InvalidArgumentError);
    first.close();
    second.close();
  }
}

}  // namespace
}  // namespace slipstream::testing
