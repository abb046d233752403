// Streams with real processes killed by SIGKILL: a real server, 4 writer processes and two reader
// groups (3 readers with roundrobin, 1 with slicedataset), all stream_peer children whose reports
// the driver reads. A writer killed mid-step (the stream goes on, or ends), a reader killed while
// it holds a step (its group goes on without it, the writers do not hang), and a stream left by a
// killed run (a new run under the same name starts afresh). Every element of every step is
// checked: its value by the reader, exactly-once delivery per group and the strategy's assignment
// by the driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "child_processes.hpp"
#include "peer_reports.hpp"
#include "slipstream/client.hpp"
#include "support/server_process.hpp"

#ifndef STREAM_PEER_BINARY
#error "STREAM_PEER_BINARY must name the stream_peer executable"
#endif

namespace slipstream::testing::stream_procs {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kStartTimeout{30000};
constexpr milliseconds kFinishTimeout{60000};

struct Group {
  std::string name;
  std::string strategy;
  std::uint32_t size = 1;
};
const Group kRoundRobin{"rr", "roundrobin", 3};
const Group kSlices{"slices", "slicedataset", 1};

class StreamKillTest : public ::testing::Test {
 protected:
  // Children are declared after the server, so they are killed before it stops.
  ServerProcess server_;
  ProcessGroup children_;
  Layout layout_;
  std::string address_ = server_.tcp_address();
  std::vector<std::string> writer_options_;  // given to every writer

  std::vector<std::string> common_arguments(const std::string& role, const std::string& stream,
                                            std::uint32_t rank, std::uint32_t count) const {
    return {STREAM_PEER_BINARY,
            "--role",
            role,
            "--address",
            address_,
            "--stream",
            stream,
            "--rank",
            std::to_string(rank),
            "--count",
            std::to_string(count),
            "--writers",
            std::to_string(layout_.writers),
            "--rows-per-chunk",
            std::to_string(layout_.rows_per_chunk),
            "--columns",
            std::to_string(layout_.columns),
            "--particles",
            std::to_string(layout_.particles)};
  }
  ChildProcess& start_writer(const std::string& stream, std::uint32_t rank, int steps,
                             std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = common_arguments("writer", stream, rank, layout_.writers);
    argv.insert(argv.end(), {"--steps", std::to_string(steps)});
    argv.insert(argv.end(), writer_options_.begin(), writer_options_.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children_.start("writer " + std::to_string(rank), argv);
  }
  // Writers 0-2, which run to the end while writer 3 is the one killed.
  std::vector<ChildProcess*> start_survivors(const std::string& stream, int steps) {
    std::vector<ChildProcess*> survivors;
    for (std::uint32_t rank = 0; rank < 3; ++rank) {
      survivors.push_back(&start_writer(stream, rank, steps));
    }
    return survivors;
  }
  ChildProcess& start_reader(const std::string& stream, const Group& group, std::uint32_t rank,
                             std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = common_arguments("reader", stream, rank, group.size);
    argv.insert(argv.end(), {"--group", group.name, "--strategy", group.strategy});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return children_.start("reader " + std::to_string(rank) + " of " + group.name, argv);
  }
  // Starts the two groups and waits until every reader has joined.
  std::vector<ChildProcess*> start_groups(const std::string& stream,
                                          const std::vector<std::vector<std::string>>& extra = {}) {
    std::vector<ChildProcess*> readers;
    for (std::uint32_t rank = 0; rank < kRoundRobin.size; ++rank) {
      readers.push_back(
          &start_reader(stream, kRoundRobin, rank,
                        rank < extra.size() ? extra[rank] : std::vector<std::string>{}));
    }
    readers.push_back(&start_reader(stream, kSlices, 0));
    EXPECT_TRUE(children_.wait_until([&] { return all_have(readers, "joined"); }, kStartTimeout))
        << children_.transcript();
    return readers;
  }
  static bool all_have(const std::vector<ChildProcess*>& children, const std::string& line) {
    for (const ChildProcess* child : children) {
      if (!child->has_line(line)) return false;
    }
    return true;
  }
  void expect_finished_cleanly(const std::vector<ChildProcess*>& children,
                               const std::string& last_line) {
    for (const ChildProcess* child : children) {
      EXPECT_TRUE(child->exited_with(0)) << child->name() << ": " << child->describe_status();
      EXPECT_TRUE(child->has_line(last_line)) << child->name() << " did not report " << last_line;
    }
  }

  // The server's INFO "# Streams" section.
  std::string info_streams() const {
    ClientOptions options;
    options.address = server_.tcp_address();
    Client client(options);
    const Reply reply = client.command({"INFO", "streams"});
    return reply.is_string() ? reply.string : std::string();
  }

  // Parses the readers' reports (the roundrobin group's first, then the slices group's), each of
  // which must show `steps` - 1 steps and `skipped` skipped because writer 3 went away.
  static void reports_skipping_one_step(const std::vector<ChildProcess*>& readers, int steps,
                                        std::int64_t skipped, std::vector<ReaderReport>& round_robin,
                                        std::vector<ReaderReport>& slices) {
    for (std::size_t i = 0; i < readers.size(); ++i) {
      ReaderReport report = parse_reader_report(readers[i]->lines());
      EXPECT_TRUE(report.bad.empty()) << readers[i]->name() << ": " << report.bad.front();
      ASSERT_EQ(report.skipped.size(), 1u) << readers[i]->name();
      EXPECT_EQ(report.skipped.begin()->first, skipped);
      EXPECT_NE(report.skipped.begin()->second.find("writer 3"), std::string::npos)
          << "the reason should name writer 3: " << report.skipped.begin()->second;
      EXPECT_EQ(report.steps.count(skipped), 0u) << readers[i]->name() << " saw the step";
      EXPECT_EQ(report.steps.size(), static_cast<std::size_t>(steps - 1)) << readers[i]->name();
      (i < kRoundRobin.size ? round_robin : slices).push_back(std::move(report));
    }
  }

  // Checks that `reports` (the readers of one group that saw `step`) got every element of the
  // step exactly once between them, or, for the elements of `lost`, never; that every reader got
  // what the strategy assigns it; and that their values were right (checked by the readers).
  void expect_step_delivered(const std::vector<const ReaderReport*>& reports,
                             const std::string& strategy, std::int64_t step,
                             const std::vector<bool>& writer_alive,
                             std::optional<std::uint32_t> lost_index = std::nullopt) {
    SCOPED_TRACE("step " + std::to_string(step) + ", strategy " + strategy);
    for (int component = 0; component < static_cast<int>(kComponents.size()); ++component) {
      Counts counts = zero_counts(layout_, component);
      Counts expected = expected_counts(layout_, component, writer_alive);
      const StepReport* first = nullptr;
      for (const ReaderReport* report : reports) {
        auto seen = report->steps.find(step);
        ASSERT_NE(seen, report->steps.end());
        const StepReport& mine = seen->second;
        if (first == nullptr) first = &mine;
        EXPECT_EQ(mine.readers, first->readers) << "the readers' tables differ";
        EXPECT_EQ(mine.chunks, first->chunks) << "the readers' chunk tables differ";
        const stream::ChunkTable pieces =
            mine.pieces.count(component) ? mine.pieces.at(component) : stream::ChunkTable{};
        const stream::ChunkTable chunks =
            mine.chunks.count(component) ? mine.chunks.at(component) : stream::ChunkTable{};
        EXPECT_EQ(pieces, assigned_pieces(strategy, layout_, component, chunks, mine.readers.size(),
                                          mine.index))
            << "reader at index " << mine.index << " of component " << component;
        for (const stream::Chunk& piece : pieces) add_piece(counts, layout_, component, piece);
      }
      if (lost_index && first != nullptr) {  // the share of a reader that never took the step
        const stream::ChunkTable chunks =
            first->chunks.count(component) ? first->chunks.at(component) : stream::ChunkTable{};
        for (const stream::Chunk& piece : assigned_pieces(strategy, layout_, component, chunks,
                                                          first->readers.size(), *lost_index)) {
          add_piece(expected, layout_, component, piece, -1);
        }
      }
      EXPECT_EQ(counts, expected) << "component " << component;
    }
  }
};

std::vector<const ReaderReport*> pointers(const std::vector<ReaderReport>& reports) {
  std::vector<const ReaderReport*> out;
  for (const ReaderReport& report : reports) out.push_back(&report);
  return out;
}

std::vector<bool> writers_alive(std::uint32_t writers, std::optional<std::uint32_t> dead = {}) {
  std::vector<bool> out(writers, true);
  if (dead) out[*dead] = false;
  return out;
}

// Writer 3 of 4 begins step 2, puts a chunk and is SIGKILLed; the others go on to step 5
// (ON-WRITER-FAILURE continue). Every reader is told that step 2 was skipped because writer 3
// went away; steps 0-1 reach each group with all four writers' elements and steps 3-5 with the
// three survivors' elements, each exactly once.
TEST_F(StreamKillTest, WriterKilledMidStepIsSkippedAndTheOthersGoOn) {
  constexpr int kSteps = 6, kStall = 2;
  const std::string stream = "writer-killed";
  std::vector<ChildProcess*> readers = start_groups(stream);
  std::vector<ChildProcess*> survivors = start_survivors(stream, kSteps);
  ChildProcess& victim = start_writer(stream, 3, kSteps, {"--stall", std::to_string(kStall)});
  // Kill once every survivor has ended the step, so that only the victim leaves it unfinished (a
  // survivor still busy with an aborted step drops it and goes on: that is
  // StreamTest.SurvivorOfAnAbortedStepGoesOnWithTheNext).
  ASSERT_TRUE(children_.wait_until(
      [&] { return victim.has_line("stalled 2") && all_have(survivors, "ended 2"); },
      kFinishTimeout))
      << children_.transcript();
  victim.kill();
  ASSERT_TRUE(children_.wait_all_finished(kFinishTimeout)) << children_.transcript();
  SCOPED_TRACE(children_.transcript());
  expect_finished_cleanly(survivors, "closed");
  expect_finished_cleanly(readers, "end");

  std::vector<ReaderReport> round_robin, slices;
  reports_skipping_one_step(readers, kSteps, kStall, round_robin, slices);
  if (::testing::Test::HasFatalFailure()) return;
  for (int step = 0; step < kSteps; ++step) {
    if (step == kStall) continue;
    const std::vector<bool> alive =
        writers_alive(layout_.writers, step < kStall ? std::nullopt : std::optional(3u));
    expect_step_delivered(pointers(round_robin), kRoundRobin.strategy, step, alive);
    expect_step_delivered(pointers(slices), kSlices.strategy, step, alive);
  }
}

// The same with ON-WRITER-FAILURE end: steps 0-1 are delivered, step 2 (and step 3, if the
// survivors had begun it) is skipped naming writer 3, then every reader gets the end of the
// stream. The survivors' next calls fail; none of them hangs.
TEST_F(StreamKillTest, WriterKilledMidStepEndsTheStreamWhenAsked) {
  constexpr int kSteps = 6, kStall = 2;
  const std::string stream = "writer-killed-end";
  writer_options_ = {"--end-on-failure"};
  std::vector<ChildProcess*> readers = start_groups(stream);
  std::vector<ChildProcess*> survivors = start_survivors(stream, kSteps);
  ChildProcess& victim = start_writer(stream, 3, kSteps, {"--stall", std::to_string(kStall)});
  ASSERT_TRUE(children_.wait_until(
      [&] { return victim.has_line("stalled 2") && all_have(survivors, "began 2"); },
      kFinishTimeout))
      << children_.transcript();
  victim.kill();
  ASSERT_TRUE(children_.wait_all_finished(kFinishTimeout)) << children_.transcript();
  SCOPED_TRACE(children_.transcript());
  expect_finished_cleanly(readers, "end");
  for (const ChildProcess* survivor : survivors) {
    // It either finished before it noticed (not possible past step 2) or was told the stream
    // ended: an error from the server, exit status 3.
    EXPECT_TRUE(survivor->exited_with(3))
        << survivor->name() << ": " << survivor->describe_status();
  }
  std::vector<ReaderReport> round_robin, slices;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    ReaderReport report = parse_reader_report(readers[i]->lines());
    EXPECT_TRUE(report.bad.empty()) << readers[i]->name() << ": " << report.bad.front();
    ASSERT_FALSE(report.skipped.empty()) << readers[i]->name();
    EXPECT_EQ(report.skipped.begin()->first, kStall);
    for (const auto& [step, reason] : report.skipped) {
      EXPECT_LE(step, kStall + 1);
      EXPECT_NE(reason.find("writer 3"), std::string::npos) << "step " << step << ": " << reason;
    }
    ASSERT_EQ(report.steps.size(), 2u) << readers[i]->name();
    EXPECT_EQ(report.steps.rbegin()->first, 1);
    (i < kRoundRobin.size ? round_robin : slices).push_back(std::move(report));
  }
  for (int step = 0; step < kStall; ++step) {
    expect_step_delivered(pointers(round_robin), kRoundRobin.strategy, step,
                          writers_alive(layout_.writers));
    expect_step_delivered(pointers(slices), kSlices.strategy, step, writers_alive(layout_.writers));
  }
}

// Writer 3 of 4 begins step 2 on the reservation its END of step 1 made (begin_step sends
// nothing then: the queue of 8 always has a slot free to reserve) and is SIGKILLed before it puts
// anything, while the three survivors hold step 2 with their chunks put and not yet ended. The
// server cannot tell whether the victim was inside step 2, so the step must be aborted, never
// completed by the survivors alone:
//   - every reader is told step 2 was skipped, naming writer 3, before any survivor ends it;
//   - each survivor's end_step() of step 2 returns false (it is told), and steps 3-5 reach every
//     group with the three survivors' elements, each exactly once.
// Over TCP, and over the Unix socket with chunks of 64 KiB in the writers' shared memory.
class ReservedStepKillTest : public StreamKillTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ReservedStepKillTest, WriterKilledInsideAReservedStepAbortsIt) {
  constexpr int kSteps = 6, kStall = 2;
  const bool shared_memory = GetParam();
  const std::string stream = "reserved-killed";
  if (shared_memory) {
    address_ = server_.unix_address();
    layout_.rows_per_chunk = 8;
    layout_.columns = 1024;
  }
  const std::string go = make_temp_dir("slipstream-hold") + "/go";
  writer_options_ = {"--queue", "8"};
  std::vector<ChildProcess*> readers = start_groups(stream);
  std::vector<ChildProcess*> survivors;
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    survivors.push_back(&start_writer(stream, rank, kSteps,
                                      {"--hold", std::to_string(kStall), "--hold-file", go}));
  }
  ChildProcess& victim =
      start_writer(stream, 3, kSteps, {"--stall-begin", std::to_string(kStall)});
  ASSERT_TRUE(children_.wait_until(
      [&] { return victim.has_line("stalled 2") && all_have(survivors, "holding 2"); },
      kFinishTimeout))
      << children_.transcript();
  victim.kill();
  // Told while the survivors still hold the step: it was aborted, not left to complete.
  auto skipped_2 = [](const ChildProcess* reader) {
    for (const std::string& line : reader->lines()) {
      if (line.rfind("skipped 2 ", 0) == 0) return true;
    }
    return false;
  };
  const bool told = children_.wait_until(
      [&] { return std::all_of(readers.begin(), readers.end(), skipped_2); }, kFinishTimeout);
  std::FILE* file = std::fopen(go.c_str(), "w");  // the survivors go on either way
  ASSERT_NE(file, nullptr);
  std::fclose(file);
  ASSERT_TRUE(told) << "the readers were not told that step 2 was skipped\n"
                    << children_.transcript();
  ASSERT_TRUE(children_.wait_all_finished(kFinishTimeout)) << children_.transcript();
  std::filesystem::remove_all(std::filesystem::path(go).parent_path());
  SCOPED_TRACE(children_.transcript());
  expect_finished_cleanly(survivors, "closed");
  for (const ChildProcess* survivor : survivors) {
    EXPECT_TRUE(survivor->has_line("aborted 2")) << survivor->name() << " was not told";
  }
  expect_finished_cleanly(readers, "end");
  std::vector<ReaderReport> round_robin, slices;
  reports_skipping_one_step(readers, kSteps, kStall, round_robin, slices);
  if (::testing::Test::HasFatalFailure()) return;
  for (int step = 0; step < kSteps; ++step) {
    if (step == kStall) continue;
    const std::vector<bool> alive =
        writers_alive(layout_.writers, step < kStall ? std::nullopt : std::optional(3u));
    expect_step_delivered(pointers(round_robin), kRoundRobin.strategy, step, alive);
    expect_step_delivered(pointers(slices), kSlices.strategy, step, alive);
  }
}

INSTANTIATE_TEST_SUITE_P(Transport, ReservedStepKillTest, ::testing::Values(false, true),
                         [](const auto& info) {
                           return std::string(info.param ? "SharedMemory" : "Tcp");
                         });

// Reader 1 of the roundrobin group loads its share of step 3 and is SIGKILLed holding it. Over
// the Unix socket, with chunks of 64 KiB that travel in the writers' shared memory.
//   - The writers do not hang: the step it held is released when its connection closes.
//   - Readers 0 and 2 got the rest of step 3 (with reader 1's share: every element once).
//   - A step whose reader table was fixed before the kill (handed to a reader before it, possible
//     with a queue limit above 1) keeps the table: reader 1's share of it is read by nobody.
//   - Every later step is shared between readers 0 and 2: every element exactly once.
//   - The slicedataset group sees every step whole.
class ReaderKillTest : public StreamKillTest, public ::testing::WithParamInterface<int> {};

TEST_P(ReaderKillTest, ReaderKilledHoldingAStep) {
  constexpr int kSteps = 8, kStall = 3;
  constexpr std::uint32_t kVictim = 1;
  const int queue_limit = GetParam();
  const std::string stream = "reader-killed";
  address_ = server_.unix_address();
  layout_.rows_per_chunk = 8;
  layout_.columns = 1024;  // 64 KiB mesh chunks: the shared-memory path
  writer_options_ = {"--queue", std::to_string(queue_limit)};
  std::vector<ChildProcess*> readers =
      start_groups(stream, {{}, {"--stall", std::to_string(kStall)}, {}});
  std::vector<ChildProcess*> writers;
  for (std::uint32_t rank = 0; rank < layout_.writers; ++rank) {
    writers.push_back(&start_writer(stream, rank, kSteps));
  }
  ChildProcess& victim = *readers[kVictim];
  ASSERT_TRUE(children_.wait_for_line(victim, "holding 3", kFinishTimeout))
      << children_.transcript();
  victim.kill();
  ASSERT_TRUE(children_.wait_all_finished(kFinishTimeout)) << children_.transcript();
  SCOPED_TRACE(children_.transcript());
  expect_finished_cleanly(writers, "closed");
  std::vector<ChildProcess*> survivors = {readers[0], readers[2], readers[3]};
  expect_finished_cleanly(survivors, "end");

  std::vector<ReaderReport> reports;
  for (const ChildProcess* reader : readers) {
    reports.push_back(parse_reader_report(reader->lines()));
    EXPECT_TRUE(reports.back().bad.empty()) << reader->name() << ": " << reports.back().bad.front();
    EXPECT_TRUE(reports.back().skipped.empty()) << reader->name();
  }
  const ReaderReport& dead = reports[kVictim];
  ASSERT_TRUE(dead.holding);
  ASSERT_EQ(dead.steps.rbegin()->first, kStall);
  const std::vector<bool> alive = writers_alive(layout_.writers);
  int steps_with_lost_share = 0;
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_TRUE(reports[0].steps.count(step)) << "reader 0 missed step " << step;
    const std::vector<std::uint32_t>& table = reports[0].steps.at(step).readers;
    const bool with_victim = std::count(table.begin(), table.end(), kVictim) > 0;
    if (!with_victim) {
      EXPECT_EQ(table, (std::vector<std::uint32_t>{0, 2})) << "step " << step;
      expect_step_delivered({&reports[0], &reports[2]}, kRoundRobin.strategy, step, alive);
    } else if (step <= kStall) {
      expect_step_delivered({&reports[0], &reports[1], &reports[2]}, kRoundRobin.strategy, step,
                            alive);
    } else {
      ++steps_with_lost_share;
      EXPECT_LT(step, kStall + queue_limit) << "only steps held at the kill keep reader 1";
      expect_step_delivered({&reports[0], &reports[2]}, kRoundRobin.strategy, step, alive, kVictim);
    }
    expect_step_delivered({&reports[3]}, kSlices.strategy, step, alive);
  }
  EXPECT_LE(steps_with_lost_share, queue_limit - 1);
  RecordProperty("steps_with_lost_share", steps_with_lost_share);
}

INSTANTIATE_TEST_SUITE_P(QueueLimit, ReaderKillTest, ::testing::Values(1, 2),
                         [](const auto& info) { return "queue" + std::to_string(info.param); });

// A run's two writers are SIGKILLed during step 1 with step 0 complete and unread (the writers
// expect one group, so nothing is dropped): the stream ends with a step still held and no rank
// bound. A new run under the same name (other values, stream attribute run = 2) must start
// afresh whether its writers or its reader come first: the reader sees steps 0-3 of the new run
// only, and once everyone has gone the server holds no stream.
class StaleStreamTest : public StreamKillTest, public ::testing::WithParamInterface<bool> {};

TEST_P(StaleStreamTest, NewRunAfterAKilledRunStartsAfresh) {
  const bool reader_first = GetParam();
  constexpr int kSteps = 4;
  const std::string stream = "stale";
  layout_.writers = 2;
  writer_options_ = {"--expect-groups", "1"};
  {
    ChildProcess& old0 = start_writer(stream, 0, kSteps, {"--run", "1", "--stall", "1"});
    ChildProcess& old1 = start_writer(stream, 1, kSteps, {"--run", "1", "--stall", "1"});
    ASSERT_TRUE(children_.wait_until(
        [&] { return old0.has_line("stalled 1") && old1.has_line("stalled 1"); }, kStartTimeout))
        << children_.transcript();
    old0.kill();
    old1.kill();
  }
  const Group group{"new", "slicedataset", 1};
  std::vector<ChildProcess*> writers;
  auto start_new_writers = [&] {
    writers.push_back(&start_writer(stream, 0, kSteps, {"--run", "2"}));
    writers.push_back(&start_writer(stream, 1, kSteps, {"--run", "2"}));
    ASSERT_TRUE(children_.wait_until([&] { return all_have(writers, "attached"); }, kStartTimeout))
        << children_.transcript();
  };
  if (!reader_first) start_new_writers();
  ChildProcess& reader = start_reader(stream, group, 0, {"--run", "2"});
  ASSERT_TRUE(children_.wait_for_line(reader, "joined", kStartTimeout)) << children_.transcript();
  if (reader_first) start_new_writers();
  // The reader first: if it saw the old run it has ended already, and the new writers would wait
  // for a group forever.
  ASSERT_TRUE(children_.wait_until([&] { return reader.finished(); }, kFinishTimeout))
      << children_.transcript();
  const ReaderReport report = parse_reader_report(reader.lines());
  ASSERT_TRUE(report.bad.empty()) << "the new run's reader saw the killed run's data:\n"
                                  << children_.transcript();
  ASSERT_TRUE(children_.wait_all_finished(kFinishTimeout)) << children_.transcript();
  SCOPED_TRACE(children_.transcript());
  expect_finished_cleanly(writers, "closed");
  expect_finished_cleanly({&reader}, "end");
  EXPECT_TRUE(report.skipped.empty());
  ASSERT_EQ(report.steps.size(), static_cast<std::size_t>(kSteps));
  for (int step = 0; step < kSteps; ++step) {
    expect_step_delivered({&report}, group.strategy, step, writers_alive(layout_.writers));
  }
  // Both runs are over and nobody is bound to either: the server forgets them (the killed run's
  // unread step too, which no reader can reach any more).
  std::string streams_info;
  EXPECT_TRUE(children_.wait_until(
      [&] {
        streams_info = info_streams();
        return streams_info.find("streams:0") != std::string::npos;
      },
      milliseconds(30000)))
      << streams_info;
}

INSTANTIATE_TEST_SUITE_P(Order, StaleStreamTest, ::testing::Values(false, true),
                         [](const auto& info) {
                           return std::string(info.param ? "ReaderFirst" : "WritersFirst");
                         });

}  // namespace
}  // namespace slipstream::testing::stream_procs
