// SS.STREAM.*: writers and reader groups against a real server. Readers compute their share of
// each step with ChunkStrategy from the NEXT reply, as a real reader would, and every byte is
// checked. No sleeps synchronise anything: tests wait on replies (or poll INFO in a bounded loop).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "slipstream/stream.hpp"
#include "slipstream/stream_chunks.hpp"
#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

using stream::Chunk;
using stream::ChunkStrategy;
using stream::ChunkTable;
using stream::RankTable;
using Extent = std::vector<std::uint64_t>;

// ---- The data the writers write --------------------------------------------------------------

// Two components: a 16x8 INT32 mesh written as 2 chunks of 2 rows per writer, and 40 DOUBLE
// particle positions written as 10 per writer. Every element's value is a function of the step
// and its global index, so any reader can check any byte.
constexpr char kMesh[] = "meshes/E/x";
constexpr char kParticles[] = "particles/e/position/x";
const Extent kMeshExtent = {16, 8};
const Extent kParticleExtent = {40};

std::int32_t mesh_value(std::int64_t step, std::uint64_t index) {
  return static_cast<std::int32_t>(step * 100000 + static_cast<std::int64_t>(index));
}
double particle_value(std::int64_t step, std::uint64_t index) {
  return static_cast<double>(step) + 0.5 * static_cast<double>(index);
}

std::string list(const Extent& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

Extent parse_list(const std::string& text) {
  Extent out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    out.push_back(std::stoull(text.substr(start, comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::uint64_t count(const Extent& extent) {
  std::uint64_t n = 1;
  for (auto e : extent) n *= e;
  return n;
}

std::uint64_t linear(const Extent& index, const Extent& extent) {
  std::uint64_t out = 0;
  for (std::size_t d = 0; d < extent.size(); ++d) out = out * extent[d] + index[d];
  return out;
}

// Calls `visit(global index)` for every element of the box (offset, extent), row-major.
template <typename Visit>
void for_each_element(const Extent& offset, const Extent& extent, Visit visit) {
  if (count(extent) == 0) return;
  Extent at = offset;
  while (true) {
    visit(at);
    std::size_t d = at.size();
    while (d > 0) {
      --d;
      if (++at[d] < offset[d] + extent[d]) break;
      at[d] = offset[d];
      if (d == 0) return;
    }
  }
}

std::string mesh_bytes(std::int64_t step, const Extent& offset, const Extent& extent) {
  std::string out;
  for_each_element(offset, extent, [&](const Extent& at) {
    std::int32_t v = mesh_value(step, linear(at, kMeshExtent));
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  });
  return out;
}

std::string particle_bytes(std::int64_t step, const Extent& offset, const Extent& extent) {
  std::string out;
  for_each_element(offset, extent, [&](const Extent& at) {
    double v = particle_value(step, at[0]);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  });
  return out;
}

// ---- Reading the NEXT reply -------------------------------------------------------------------

struct Component {
  std::string name, dtype;
  Extent global;
  ChunkTable chunks;
  std::vector<long long> ids;  // chunk id of chunks[i]
};

struct Step {
  std::int64_t number = -1;
  RankTable readers;                    // strategy rank (index) -> hostname
  std::vector<long long> reader_ranks;  // group rank of each index
  RankTable writers;
  std::string strategy;
  std::vector<RespReply> attributes;
  std::vector<Component> components;
};

Step parse_step(const RespReply& reply) {
  Step out;
  EXPECT_EQ(reply.elements.size(), 7u) << reply.str();
  if (reply.elements.size() != 7 || reply.elements[0].text != "step") return out;
  out.number = reply.elements[1].integer;
  for (const RespReply& r : reply.elements[2].elements) {
    out.readers[static_cast<std::uint32_t>(out.reader_ranks.size())] = r.elements[1].text;
    out.reader_ranks.push_back(r.elements[0].integer);
  }
  for (const RespReply& w : reply.elements[3].elements) {
    out.writers[static_cast<std::uint32_t>(w.elements[0].integer)] = w.elements[1].text;
  }
  out.strategy = reply.elements[4].text;
  out.attributes = reply.elements[5].elements;
  for (const RespReply& c : reply.elements[6].elements) {
    Component component{
        c.elements[0].text, c.elements[1].text, parse_list(c.elements[2].text), {}, {}};
    for (const RespReply& chunk : c.elements[3].elements) {
      component.ids.push_back(chunk.elements[0].integer);
      component.chunks.push_back(Chunk{parse_list(chunk.elements[2].text),
                                       parse_list(chunk.elements[3].text),
                                       static_cast<std::uint32_t>(chunk.elements[1].integer)});
    }
    out.components.push_back(std::move(component));
  }
  return out;
}

bool contains(const Chunk& outer, const Chunk& inner) {
  if (outer.source_rank != inner.source_rank) return false;
  for (std::size_t d = 0; d < outer.offset.size(); ++d) {
    if (inner.offset[d] < outer.offset[d] ||
        inner.offset[d] + inner.extent[d] > outer.offset[d] + outer.extent[d]) {
      return false;
    }
  }
  return true;
}

// One reader's turn at a step it holds: computes its share with the group's strategy, GETs the
// chunks it overlaps, checks every element's bytes and counts each element it read in `seen`.
void read_share(RawClient& reader, const std::string& stream, const std::string& group, int rank,
                const Step& step, std::map<std::string, std::vector<int>>& seen) {
  auto index = std::find(step.reader_ranks.begin(), step.reader_ranks.end(), rank);
  ASSERT_NE(index, step.reader_ranks.end());
  const auto me = static_cast<std::uint32_t>(index - step.reader_ranks.begin());
  const ChunkStrategy strategy = ChunkStrategy::parse(step.strategy);
  for (const Component& component : step.components) {
    auto assignment =
        strategy.assign(component.global, component.chunks, step.writers, step.readers);
    const bool mesh = component.name == kMesh;
    const std::size_t element = mesh ? 4 : 8;
    auto& counts = seen[component.name];
    counts.resize(count(component.global));
    for (const Chunk& piece : assignment.by_reader.at(me)) {
      std::size_t source = 0;
      while (source < component.chunks.size() && !contains(component.chunks[source], piece)) {
        ++source;
      }
      ASSERT_LT(source, component.chunks.size()) << "a piece outside every chunk";
      RespReply got =
          reader.call({"SS.STREAM.GET", stream, group, std::to_string(rank),
                       std::to_string(step.number), std::to_string(component.ids[source])});
      ASSERT_EQ(got.kind, RespReply::Kind::kArray) << got.str();
      ASSERT_EQ(got.elements.size(), 1u);
      const std::string& bytes = got.elements[0].text;
      const Chunk& chunk = component.chunks[source];
      ASSERT_EQ(bytes.size(), count(chunk.extent) * element);
      for_each_element(piece.offset, piece.extent, [&](const Extent& at) {
        Extent local(at.size());
        for (std::size_t d = 0; d < at.size(); ++d) local[d] = at[d] - chunk.offset[d];
        const std::size_t at_byte = linear(local, chunk.extent) * element;
        const std::uint64_t global = linear(at, component.global);
        if (mesh) {
          std::int32_t v;
          std::memcpy(&v, bytes.data() + at_byte, sizeof v);
          EXPECT_EQ(v, mesh_value(step.number, global));
        } else {
          double v;
          std::memcpy(&v, bytes.data() + at_byte, sizeof v);
          EXPECT_EQ(v, particle_value(step.number, global));
        }
        ++counts[global];
      });
    }
  }
}

// ---- Fixture ----------------------------------------------------------------------------------

class StreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess({"--threads", "2"}); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  RawClient client() { return RawClient::tcp(server_->port()); }
  // A stream name of this test's own.
  static std::string stream_name() {
    return std::string("s:") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  // INFO field `name` of `stream` (integers only).
  static long long info_field(RawClient& c, const std::string& stream, const std::string& name) {
    RespReply info = c.call({"SS.STREAM.INFO", stream});
    for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
      if (info.elements[i].text == name) return info.elements[i + 1].integer;
    }
    ADD_FAILURE() << "no field " << name << " in " << info.str();
    return -1;
  }
  // A field of group `group` in INFO.
  static long long group_field(RawClient& c, const std::string& stream, const std::string& group,
                               const std::string& name) {
    RespReply info = c.call({"SS.STREAM.INFO", stream});
    for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
      if (info.elements[i].text != "groups") continue;
      for (const RespReply& g : info.elements[i + 1].elements) {
        if (g.elements[1].text != group) continue;
        for (std::size_t k = 0; k + 1 < g.elements.size(); k += 2) {
          if (g.elements[k].text == name) return g.elements[k + 1].integer;
        }
      }
    }
    ADD_FAILURE() << "no field " << name << " of group " << group << " in " << info.str();
    return -1;
  }
  // Polls INFO until group `group` has `readers` readers (a connection closed elsewhere is
  // handled on the server's own time); bounded.
  static void wait_for_readers(RawClient& c, const std::string& stream, const std::string& group,
                               long long readers) {
    for (int attempt = 0; attempt < 3000; ++attempt) {
      if (group_field(c, stream, group, "readers") == readers) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "group " << group << " never got to " << readers << " readers";
  }
  static void ok(RawClient& c, const std::vector<std::string>& args) {
    RespReply reply = c.call(args);
    ASSERT_TRUE(reply.is_ok()) << args[0] << ": " << reply.str();
  }
  // Writer `rank` of `writers` writes its part of both components in `step` (begun already).
  static void put_share(RawClient& w, const std::string& stream, int rank, int writers,
                        std::int64_t step) {
    const std::string r = std::to_string(rank), s = std::to_string(step);
    const std::uint64_t rows = kMeshExtent[0] / static_cast<std::uint64_t>(writers);
    for (std::uint64_t half = 0; half < 2; ++half) {
      Extent offset = {rank * rows + half * rows / 2, 0}, extent = {rows / 2, kMeshExtent[1]};
      ok(w, {"SS.STREAM.PUT", stream, r, s, kMesh, "INT32", list(kMeshExtent), list(offset),
             list(extent), mesh_bytes(step, offset, extent)});
    }
    const std::uint64_t per = kParticleExtent[0] / static_cast<std::uint64_t>(writers);
    Extent offset = {rank * per}, extent = {per};
    ok(w, {"SS.STREAM.PUT", stream, r, s, kParticles, "DOUBLE", list(kParticleExtent), list(offset),
           list(extent), particle_bytes(step, offset, extent)});
  }
  // One writer writes a whole step of a 1-writer stream.
  static void write_step(RawClient& w, const std::string& stream, std::int64_t step) {
    ok(w, {"SS.STREAM.BEGIN", stream, "0", std::to_string(step)});
    put_share(w, stream, 0, 1, step);
    ok(w, {"SS.STREAM.END", stream, "0", std::to_string(step)});
  }
  // A 1-writer stream with a queue of 1 and a block group "g" of 1: step 0 written and handed to
  // the reader, which holds the one slot.
  static void hand_the_one_slot_to_the_reader(RawClient& writer, RawClient& reader,
                                              const std::string& stream) {
    ok(writer, {"SS.STREAM.WRITE", stream, "0", "1", "node0", "QUEUE", "1"});
    ok(reader, {"SS.STREAM.JOIN", stream, "g", "0", "1", "node0", "POLICY", "block"});
    write_step(writer, stream, 0);
    ASSERT_EQ(parse_step(reader.call({"SS.STREAM.NEXT", stream, "g", "0"})).number, 0);
  }
  static ServerProcess* server_;
};
ServerProcess* StreamTest::server_ = nullptr;

// ---- Tests ------------------------------------------------------------------------------------

TEST_F(StreamTest, FourWritersTwoGroupsReadEveryByteOnce) {
  const std::string s = stream_name();
  std::vector<RawClient> writers, rr, slice;
  for (int w = 0; w < 4; ++w) {
    writers.push_back(client());
    ok(writers[w], {"SS.STREAM.WRITE", s, std::to_string(w), "4", "node" + std::to_string(w % 2)});
  }
  for (int r = 0; r < 3; ++r) {
    rr.push_back(client());
    ok(rr[r], {"SS.STREAM.JOIN", s, "train", std::to_string(r), "3", "node" + std::to_string(r),
               "STRATEGY", "ROUNDROBIN"});
  }
  slice.push_back(client());
  ok(slice[0], {"SS.STREAM.JOIN", s, "view", "0", "1", "node0", "STRATEGY", "slicedataset"});
  ok(writers[0], {"SS.STREAM.ATTR", s, "0", "-1", "/", "software", "string", "slipstream"});

  for (std::int64_t step = 0; step < 3; ++step) {
    const std::string n = std::to_string(step);
    for (int w = 0; w < 4; ++w) {
      ok(writers[w], {"SS.STREAM.BEGIN", s, std::to_string(w), n, "TIMEOUT", "5000"});
      put_share(writers[w], s, w, 4, step);
    }
    ok(writers[1], {"SS.STREAM.ATTR", s, "1", n, "/", "time", "float", "0.25"});
    ok(writers[1], {"SS.STREAM.ATTR", s, "1", n, kMesh, "unitSI", "floats", "1.5", "2"});
    for (int w = 0; w < 3; ++w) ok(writers[w], {"SS.STREAM.END", s, std::to_string(w), n});
    // Three of four writers have ended it: the step is invisible.
    EXPECT_EQ(rr[0].call({"SS.STREAM.NEXT", s, "train", "0", "TIMEOUT", "50"}).str(), "(nil)");
    ok(writers[3], {"SS.STREAM.END", s, "3", n});

    std::map<std::string, std::vector<int>> seen_train, seen_view;
    for (int r = 0; r < 3; ++r) {
      Step got = parse_step(rr[r].call({"SS.STREAM.NEXT", s, "train", std::to_string(r)}));
      ASSERT_EQ(got.number, step);
      EXPECT_EQ(got.strategy, "roundrobin");
      EXPECT_EQ(got.reader_ranks, (std::vector<long long>{0, 1, 2}));
      EXPECT_EQ(got.writers.size(), 4u);
      EXPECT_EQ(got.writers.at(3), "node1");
      ASSERT_EQ(got.components.size(), 2u);
      EXPECT_EQ(got.components[0].name, kMesh);  // first-put order
      EXPECT_EQ(got.components[0].chunks.size(), 8u);
      EXPECT_EQ(got.components[1].dtype, "DOUBLE");
      // The stream-level attribute comes with each reader's first step only (it does not
      // change), then the step's own.
      const std::size_t stream_level = step == 0 ? 1 : 0;
      ASSERT_EQ(got.attributes.size(), stream_level + 2);
      if (stream_level == 1) {
        EXPECT_EQ(got.attributes[0].str(), "[:-1, $/, $software, $string, $slipstream]");
      }
      EXPECT_EQ(got.attributes[stream_level].str(), "[:" + n + ", $/, $time, $float, $0.25]");
      EXPECT_EQ(got.attributes[stream_level + 1].str(),
                "[:" + n + ", $meshes/E/x, $unitSI, $floats, [$1.5, $2]]");
      read_share(rr[r], s, "train", r, got, seen_train);
    }
    Step view = parse_step(slice[0].call({"SS.STREAM.NEXT", s, "view", "0"}));
    ASSERT_EQ(view.number, step);
    read_share(slice[0], s, "view", 0, view, seen_view);
    for (auto* seen : {&seen_train, &seen_view}) {
      for (const auto& [component, counts] : *seen) {
        for (std::size_t i = 0; i < counts.size(); ++i) {
          ASSERT_EQ(counts[i], 1) << component << " element " << i << " step " << step;
        }
      }
    }
    for (int r = 0; r < 3; ++r) ok(rr[r], {"SS.STREAM.RELEASE", s, "train", std::to_string(r), n});
    ok(slice[0], {"SS.STREAM.RELEASE", s, "view", "0", n});
  }
  EXPECT_EQ(info_field(writers[0], s, "steps_completed"), 3);
  EXPECT_EQ(info_field(writers[0], s, "steps_held"), 0);
  EXPECT_EQ(info_field(writers[0], s, "bytes_held"), 0);
  for (int w = 0; w < 4; ++w) ok(writers[w], {"SS.STREAM.CLOSE", s, std::to_string(w)});
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(rr[r].call({"SS.STREAM.NEXT", s, "train", std::to_string(r)}).str(), "[$end]");
  }
  EXPECT_EQ(slice[0].call({"SS.STREAM.NEXT", s, "view", "0"}).str(), "[$end]");
  EXPECT_EQ(info_field(writers[0], s, "ended"), 1);
}

TEST_F(StreamTest, BlockHoldsBeginUntilRelease) {
  const std::string s = stream_name();
  RawClient writer = client(), reader = client();
  hand_the_one_slot_to_the_reader(writer, reader, s);
  // The one slot is held by the reader: BEGIN waits.
  EXPECT_EQ(writer.call({"SS.STREAM.BEGIN", s, "0", "1", "TIMEOUT", "50"}).str(), "(nil)");
  writer.send({"SS.STREAM.BEGIN", s, "0", "1"});
  ok(reader, {"SS.STREAM.RELEASE", s, "g", "0", "0"});
  EXPECT_TRUE(writer.read_reply().is_ok());  // answered once the step was released
  put_share(writer, s, 0, 1, 1);
  ok(writer, {"SS.STREAM.END", s, "0", "1"});
  EXPECT_EQ(parse_step(reader.call({"SS.STREAM.NEXT", s, "g", "0"})).number, 1);
}

// NEXT ... RELEASE step releases the step the reader holds and takes the next in one request
// (one reply): the release lets the writer's parked BEGIN go on, and the next step comes in the
// same reply once it is complete. A RELEASE that is refused is the reply, and no step is taken.
TEST_F(StreamTest, NextReleasesTheHeldStepInTheSameRequest) {
  const std::string s = stream_name();
  RawClient writer = client(), reader = client();
  hand_the_one_slot_to_the_reader(writer, reader, s);
  writer.send({"SS.STREAM.BEGIN", s, "0", "1"});  // waits: the reader holds the one slot
  // A step the reader does not hold: refused, and step 0 stays held (BEGIN still waits).
  RespReply refused = reader.call({"SS.STREAM.NEXT", s, "g", "0", "RELEASE", "7", "TIMEOUT", "50"});
  EXPECT_EQ(refused.kind, RespReply::Kind::kError) << refused.str();
  EXPECT_EQ(info_field(reader, s, "steps_held"), 1);
  reader.send({"SS.STREAM.NEXT", s, "g", "0", "RELEASE", "0", "TIMEOUT", "5000"});
  EXPECT_TRUE(writer.read_reply().is_ok());  // the release let BEGIN go on
  put_share(writer, s, 0, 1, 1);
  ok(writer, {"SS.STREAM.END", s, "0", "1"});
  EXPECT_EQ(parse_step(reader.read_reply()).number, 1);  // the only reply to the NEXT
  EXPECT_EQ(group_field(reader, s, "g", "delivered"), 2);
  EXPECT_EQ(info_field(reader, s, "steps_held"), 1);
  // Only once, and only with a step.
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0", "RELEASE", "1", "RELEASE", "1"}).kind,
            RespReply::Kind::kError);
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0", "RELEASE"}).kind,
            RespReply::Kind::kError);
}

TEST_F(StreamTest, DiscardSkipsAndCounts) {
  const std::string s = stream_name();
  RawClient writer = client(), reader = client();
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0", "QUEUE", "2"});
  ok(reader, {"SS.STREAM.JOIN", s, "live", "0", "1", "node0", "POLICY", "discard"});
  // The reader reads nothing while four steps are written: the writer never waits.
  for (std::int64_t step = 0; step < 4; ++step) write_step(writer, s, step);
  EXPECT_GE(group_field(writer, s, "live", "discarded"), 1);
  Step first = parse_step(reader.call({"SS.STREAM.NEXT", s, "live", "0"}));
  EXPECT_EQ(first.number, 0);
  ok(reader, {"SS.STREAM.RELEASE", s, "live", "0", "0"});
  EXPECT_EQ(group_field(writer, s, "live", "discarded"), 3);
  EXPECT_EQ(group_field(writer, s, "live", "delivered"), 1);
  write_step(writer, s, 4);
  EXPECT_EQ(parse_step(reader.call({"SS.STREAM.NEXT", s, "live", "0"})).number, 4);
}

TEST_F(StreamTest, ReadersJoinBeforeWriters) {
  const std::string s = stream_name();
  RawClient reader = client(), writer = client();
  ok(reader, {"SS.STREAM.JOIN", s, "early", "0", "1", "node0"});
  EXPECT_EQ(info_field(reader, s, "writers"), 0);
  EXPECT_EQ(group_field(reader, s, "early", "readers"), 1);
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "early", "0", "TIMEOUT", "20"}).str(), "(nil)");
  reader.send({"SS.STREAM.NEXT", s, "early", "0"});  // parked until a writer ends a step
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0"});
  write_step(writer, s, 7);
  Step got = parse_step(reader.read_reply());
  EXPECT_EQ(got.number, 7);
  EXPECT_EQ(got.strategy, "hostname_binpacking_slicedataset");  // openPMD's default
  std::map<std::string, std::vector<int>> seen;
  read_share(reader, s, "early", 0, got, seen);
}

TEST_F(StreamTest, WriterDisconnectMidStepSkipsAndGoesOn) {
  const std::string s = stream_name();
  RawClient w0 = client(), reader = client();
  auto w1 = std::make_unique<RawClient>(client());
  ok(w0, {"SS.STREAM.WRITE", s, "0", "2", "node0"});
  ok(*w1, {"SS.STREAM.WRITE", s, "1", "2", "node1"});
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  for (RawClient* w : {&w0, w1.get()}) ok(*w, {"SS.STREAM.BEGIN", s, w == &w0 ? "0" : "1", "0"});
  put_share(w0, s, 0, 2, 0);
  put_share(*w1, s, 1, 2, 0);
  ok(w0, {"SS.STREAM.END", s, "0", "0"});
  ok(*w1, {"SS.STREAM.END", s, "1", "0"});
  ok(w0, {"SS.STREAM.BEGIN", s, "0", "1"});
  ok(*w1, {"SS.STREAM.BEGIN", s, "1", "1"});
  put_share(w0, s, 0, 2, 1);
  w1.reset();  // writer 1 dies during step 1

  ASSERT_EQ(parse_step(reader.call({"SS.STREAM.NEXT", s, "g", "0"})).number, 0);
  ok(reader, {"SS.STREAM.RELEASE", s, "g", "0", "0"});
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0"}).str(),
            "[$skipped, :1, $writer 1 disconnected during step 1]");
  // Step 1 was aborted: the survivor is told so with ABORTED (not a misuse error), for its
  // chunks and its END alike, so that it can drop the step and go on.
  RespReply put = w0.call({"SS.STREAM.PUT", s, "0", "1", "meshes/late", "INT8", "1", "0", "1", "x"});
  EXPECT_EQ(put.text.rfind("ABORTED step 1 was aborted (writer 1 disconnected during step 1)", 0),
            0u) << put.str();
  EXPECT_EQ(w0.call({"SS.STREAM.END", s, "0", "1"}).text.rfind("ABORTED", 0), 0u);
  // The stream goes on with writer 0 alone.
  ok(w0, {"SS.STREAM.BEGIN", s, "0", "2"});
  ok(w0, {"SS.STREAM.END", s, "0", "2"});
  Step got = parse_step(reader.call({"SS.STREAM.NEXT", s, "g", "0"}));
  EXPECT_EQ(got.number, 2);
  EXPECT_EQ(info_field(w0, s, "steps_aborted"), 1);
  EXPECT_EQ(group_field(w0, s, "g", "aborted"), 1);
}

TEST_F(StreamTest, ReaderDisconnectWhileHoldingStep) {
  const std::string s = stream_name();
  RawClient writer = client(), r0 = client();
  auto r1 = std::make_unique<RawClient>(client());
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0", "QUEUE", "1"});
  ok(r0, {"SS.STREAM.JOIN", s, "g", "0", "2", "hostA", "STRATEGY", "roundrobin"});
  ok(*r1, {"SS.STREAM.JOIN", s, "g", "1", "2", "hostB", "STRATEGY", "roundrobin"});
  write_step(writer, s, 0);
  Step a = parse_step(r0.call({"SS.STREAM.NEXT", s, "g", "0"}));
  Step b = parse_step(r1->call({"SS.STREAM.NEXT", s, "g", "1"}));
  EXPECT_EQ(a.reader_ranks, (std::vector<long long>{0, 1}));
  EXPECT_EQ(b.readers.at(1), "hostB");
  r1.reset();  // dies holding step 0
  ok(r0, {"SS.STREAM.RELEASE", s, "g", "0", "0"});
  // QUEUE 1: the next step gets a slot only once the dead reader's hold is given back.
  ok(writer, {"SS.STREAM.BEGIN", s, "0", "1", "TIMEOUT", "5000"});
  put_share(writer, s, 0, 1, 1);
  ok(writer, {"SS.STREAM.END", s, "0", "1"});
  Step next = parse_step(r0.call({"SS.STREAM.NEXT", s, "g", "0"}));
  EXPECT_EQ(next.number, 1);
  EXPECT_EQ(next.reader_ranks, (std::vector<long long>{0}));
  std::map<std::string, std::vector<int>> seen;
  read_share(r0, s, "g", 0, next, seen);  // the survivor now reads everything
  for (const auto& [component, counts] : seen) {
    for (int n : counts) EXPECT_EQ(n, 1) << component;
  }
}

TEST_F(StreamTest, WritersCloseThenReadersGetEnd) {
  const std::string s = stream_name();
  RawClient w0 = client(), w1 = client(), reader = client();
  ok(w0, {"SS.STREAM.WRITE", s, "0", "2", "node0"});
  ok(w1, {"SS.STREAM.WRITE", s, "1", "2", "node0"});
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  reader.send({"SS.STREAM.NEXT", s, "g", "0"});
  ok(w0, {"SS.STREAM.CLOSE", s, "0"});
  EXPECT_EQ(info_field(w1, s, "ended"), 0);
  ok(w1, {"SS.STREAM.CLOSE", s, "1"});
  EXPECT_EQ(reader.read_reply().str(), "[$end]");
  ok(reader, {"SS.STREAM.LEAVE", s, "g", "0"});
  // Nobody is left and nothing is held: the ended run is kept for a minute, so that a group
  // joining late is given the end instead of waiting for a run that will not come.
  EXPECT_EQ(info_field(reader, s, "ended"), 1);
  EXPECT_GT(info_field(reader, s, "kept_ms"), 0);
  EXPECT_LE(info_field(reader, s, "kept_ms"), 60000);
  RawClient late = client();
  ok(late, {"SS.STREAM.JOIN", s, "late", "0", "1", "node0"});
  EXPECT_EQ(late.call({"SS.STREAM.NEXT", s, "late", "0", "TIMEOUT", "20000"}).str(), "[$end]");
  ok(late, {"SS.STREAM.LEAVE", s, "late", "0"});
  const std::string totals = late.call({"INFO", "streams"}).text;
  EXPECT_NE(totals.find("streams_ended_kept:"), std::string::npos) << totals;
}

TEST_F(StreamTest, NewRunReplacesAnEndedStream) {
  const std::string s = stream_name();
  RawClient writer = client(), old_reader = client(), new_reader = client();
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0"});
  ok(old_reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  write_step(writer, s, 5);
  ok(writer, {"SS.STREAM.CLOSE", s, "0"});
  // The next run starts over at step 0; the old run's reader still finishes the old one.
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0"});
  ok(new_reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  write_step(writer, s, 0);
  EXPECT_EQ(parse_step(old_reader.call({"SS.STREAM.NEXT", s, "g", "0"})).number, 5);
  ok(old_reader, {"SS.STREAM.RELEASE", s, "g", "0", "5"});
  EXPECT_EQ(old_reader.call({"SS.STREAM.NEXT", s, "g", "0"}).str(), "[$end]");
  EXPECT_EQ(parse_step(new_reader.call({"SS.STREAM.NEXT", s, "g", "0"})).number, 0);
  EXPECT_EQ(info_field(writer, s, "ended"), 0);
}

TEST_F(StreamTest, StepTimeoutAbortsTheStep) {
  const std::string s = stream_name();
  RawClient w0 = client(), w1 = client(), reader = client();
  ok(w0, {"SS.STREAM.WRITE", s, "0", "2", "node0", "STEP-TIMEOUT", "2000"});
  ok(w1, {"SS.STREAM.WRITE", s, "1", "2", "node0", "STEP-TIMEOUT", "2000"});
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  ok(w0, {"SS.STREAM.BEGIN", s, "0", "0"});
  ok(w1, {"SS.STREAM.BEGIN", s, "1", "0"});
  ok(w0, {"SS.STREAM.END", s, "0", "0"});
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0"}).str(),
            "[$skipped, :0, $step 0 timed out after 2000 ms: writer 1 had not ended it]");
}

// BUG (issue 26.D4): timeouts of 2^63-1 ms overflowed their deadlines into the past: NEXT answered
// nil at once and STEP-TIMEOUT aborted every step. They saturate at about 34 years.
TEST_F(StreamTest, HugeTimeoutsMeanNoTimeout) {
  const std::string s = stream_name();
  const std::string huge = "9223372036854775807";
  RawClient writer = client(), reader = client();
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0", "STEP-TIMEOUT", huge});
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  reader.send({"SS.STREAM.NEXT", s, "g", "0", "TIMEOUT", huge});
  ok(writer, {"SS.STREAM.BEGIN", s, "0", "0", "TIMEOUT", huge});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // an expired deadline fires here
  ok(writer, {"SS.STREAM.END", s, "0", "0"});
  EXPECT_EQ(parse_step(reader.read_reply()).number, 0);
}

// Issue 26.A5: any writer may set a step's (or the stream's) attributes; writers that set the same
// one must agree. A different value from another writer is refused (and so is that writer's END
// of the step, once), never a silent choice; the value the readers see is the agreed one.
TEST_F(StreamTest, WritersThatSetTheSameAttributeMustAgree) {
  const std::string s = stream_name();
  RawClient w0 = client(), w1 = client(), reader = client();
  ok(w0, {"SS.STREAM.WRITE", s, "0", "2", "node0"});
  ok(w1, {"SS.STREAM.WRITE", s, "1", "2", "node0"});
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  ok(w0, {"SS.STREAM.ATTR", s, "0", "-1", "/", "author", "string", "a"});
  ok(w1, {"SS.STREAM.ATTR", s, "1", "-1", "/", "author", "string", "a"});  // agrees
  const RespReply stream_level = w1.call({"SS.STREAM.ATTR", s, "1", "-1", "/", "author", "string", "b"});
  EXPECT_NE(stream_level.text.find("writer 1 set a different value than writer 0"),
            std::string::npos)
      << stream_level.str();
  for (RawClient* w : {&w0, &w1}) {
    const std::string rank = w == &w0 ? "0" : "1";
    ok(*w, {"SS.STREAM.BEGIN", s, rank, "0"});
    ok(*w, {"SS.STREAM.ATTR", s, rank, "0", "/", "time", "float", "0.5"});
  }
  ok(w0, {"SS.STREAM.ATTR", s, "0", "0", "/", "dt", "float", "1"});
  ok(w0, {"SS.STREAM.ATTR", s, "0", "0", "/", "dt", "float", "2"});  // its own: replaced
  const RespReply step_level = w1.call({"SS.STREAM.ATTR", s, "1", "0", "/", "time", "float", "0.75"});
  EXPECT_NE(step_level.text.find("attribute 'time' of / in step 0: writer 1 set a different "
                                 "value than writer 0; writers that set the same attribute must "
                                 "agree"),
            std::string::npos)
      << step_level.str();
  EXPECT_TRUE(w1.call({"SS.STREAM.END", s, "1", "0"}).is_error());  // its attribute was refused
  ok(w1, {"SS.STREAM.END", s, "1", "0"});
  ok(w0, {"SS.STREAM.END", s, "0", "0"});
  const std::string next = reader.call({"SS.STREAM.NEXT", s, "g", "0"}).str();
  EXPECT_NE(next.find("[:0, $/, $time, $float, $0.5]"), std::string::npos) << next;
  EXPECT_NE(next.find("[:0, $/, $dt, $float, $2]"), std::string::npos) << next;
  EXPECT_NE(next.find("[:-1, $/, $author, $string, $a]"), std::string::npos) << next;
}

TEST_F(StreamTest, TimeoutRepliesNil) {
  const std::string s = stream_name();
  RawClient writer = client(), reader = client();
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0", "QUEUE", "1", "EXPECT-GROUPS", "1"});
  ok(writer, {"SS.STREAM.BEGIN", s, "0", "0"});
  ok(writer, {"SS.STREAM.END", s, "0", "0"});
  // No group yet and one expected: the complete step is kept, so the next BEGIN waits.
  EXPECT_EQ(writer.call({"SS.STREAM.BEGIN", s, "0", "1", "TIMEOUT", "30"}).str(), "(nil)");
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0", "START", "newest"});
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0", "TIMEOUT", "30"}).str(), "(nil)");
  EXPECT_EQ(writer.call({"PING"}).str(), "+PONG");  // the connections go on
  EXPECT_EQ(reader.call({"PING"}).str(), "+PONG");
}

TEST_F(StreamTest, MisuseIsRefusedWithClearErrors) {
  const std::string s = stream_name();
  RawClient writer = client(), other = client(), reader = client();
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0"});
  auto error = [](RawClient& c, const std::vector<std::string>& args) {
    RespReply reply = c.call(args);
    EXPECT_TRUE(reply.is_error()) << args[0] << ": " << reply.str();
    return reply.text;
  };
  EXPECT_EQ(error(other, {"SS.STREAM.BEGIN", s, "0", "0"}),
            "ERR writer 0 of stream " + s + " is attached to another connection");
  EXPECT_NE(error(other, {"SS.STREAM.WRITE", s, "1", "2", "node0"}).find("writers 1"),
            std::string::npos);
  EXPECT_NE(error(other, {"SS.STREAM.WRITE", s, "0", "1", "node0", "QUEUE", "3"})
                .find("QUEUE 2 (this writer asked for 3)"),
            std::string::npos);
  ok(writer, {"SS.STREAM.BEGIN", s, "0", "3"});
  EXPECT_NE(error(writer, {"SS.STREAM.PUT", s, "0", "3", kMesh, "INT32", "4,4", "0,0", "2,2",
                           std::string(15, 'x')})
                .find("needs 4 x 4 bytes"),
            std::string::npos);
  EXPECT_NE(error(writer, {"SS.STREAM.PUT", s, "0", "3", kMesh, "INT32", "4,4", "3,0", "2,2",
                           std::string(16, 'x')})
                .find("outside the global extent"),
            std::string::npos);
  EXPECT_NE(error(writer, {"SS.STREAM.PUT", s, "0", "3", kMesh, "COMPLEX", "4", "0", "1", "xxxx"})
                .find("unknown dtype"),
            std::string::npos);
  EXPECT_NE(error(writer, {"SS.STREAM.PUT", s, "0", "3", "bad name", "INT8", "4", "0", "1", "x"})
                .find("component name"),
            std::string::npos);
  ok(writer, {"SS.STREAM.PUT", s, "0", "3", kMesh, "INT8", "4", "0", "1", "x"});
  EXPECT_NE(error(writer, {"SS.STREAM.PUT", s, "0", "3", kMesh, "INT16", "4", "1", "1", "xx"})
                .find("is INT8 with global extent 4"),
            std::string::npos);
  EXPECT_NE(error(writer, {"SS.STREAM.ATTR", s, "0", "3", "/", "time", "float", "fast"})
                .find("floating-point"),
            std::string::npos);
  EXPECT_NE(error(writer, {"SS.STREAM.ATTR", s, "0", "3", "/", "time", "int", "1", "2"})
                .find("exactly 1 value"),
            std::string::npos);
  // A refused chunk or attribute makes the next END of the step fail once (a client may
  // pipeline END behind its puts); the step stays open and ends on the next try.
  EXPECT_NE(error(writer, {"SS.STREAM.END", s, "0", "3"}).find("was refused"), std::string::npos);
  ok(writer, {"SS.STREAM.END", s, "0", "3"});
  EXPECT_NE(error(writer, {"SS.STREAM.BEGIN", s, "0", "2"}).find("must increase"),
            std::string::npos);
  EXPECT_NE(error(writer, {"SS.STREAM.PUT", s, "0", "3", kMesh, "INT8", "4", "1", "1", "x"})
                .find("already ended step 3"),
            std::string::npos);
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0", "STRATEGY", "blocks"});
  EXPECT_NE(error(other, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0", "STRATEGY", "blocks"})
                .find("another connection"),
            std::string::npos);
  EXPECT_NE(error(other, {"SS.STREAM.JOIN", s, "g2", "0", "1", "node0", "STRATEGY", "nonsense"})
                .find("roundrobin"),
            std::string::npos);  // the error lists the valid names
  EXPECT_NE(error(other, {"SS.STREAM.JOIN", s, "g", "1", "2", "node0"}).find("has size 1"),
            std::string::npos);
  EXPECT_NE(error(reader, {"SS.STREAM.GET", s, "g", "0", "3", "0"}).find("does not hold step 3"),
            std::string::npos);
  EXPECT_NE(error(other, {"SS.STREAM.NEXT", s, "g", "0"}).find("another connection"),
            std::string::npos);
  ASSERT_EQ(parse_step(reader.call({"SS.STREAM.NEXT", s, "g", "0"})).number, 3);
  EXPECT_NE(error(reader, {"SS.STREAM.GET", s, "g", "0", "3", "1"}).find("out of range"),
            std::string::npos);
  EXPECT_EQ(reader.call({"SS.STREAM.GET", s, "g", "0", "3", "0"}).str(), "[$x]");
  EXPECT_NE(error(reader, {"SS.STREAM.NEXT", s, "g", "0"}).find("release it first"),
            std::string::npos);
  EXPECT_NE(error(reader, {"SS.STREAM.RELEASE", s, "g", "0", "2"}).find("does not hold"),
            std::string::npos);
  EXPECT_NE(error(reader, {"SS.STREAM.INFO", "s:nonexistent"}).find("no stream"),
            std::string::npos);
  EXPECT_NE(error(reader, {"SS.STREAM.NEXT", s, "g", "0", "WAIT", "1"}).find("TIMEOUT"),
            std::string::npos);
}

TEST_F(StreamTest, InfoHasAStreamsSection) {
  const std::string s = stream_name();
  RawClient writer = client();
  ok(writer, {"SS.STREAM.WRITE", s, "0", "1", "node0"});
  ok(writer, {"SS.STREAM.BEGIN", s, "0", "0"});
  ok(writer, {"SS.STREAM.PUT", s, "0", "0", "meshes/rho", "UINT8", "3", "0", "3", "abc"});
  const std::string info = writer.call({"INFO", "streams"}).text;
  EXPECT_NE(info.find("# Streams"), std::string::npos) << info;
  EXPECT_NE(info.find("stream_steps_held:"), std::string::npos) << info;
  EXPECT_GE(info_field(writer, s, "bytes_held"), 3);
}

// INFO memory's used_memory.
std::size_t used_memory(RawClient& c) {
  const std::string info = c.call({"INFO", "memory"}).text;
  const std::size_t at = info.find("used_memory:") + std::strlen("used_memory:");
  return std::stoull(info.substr(at));
}

TEST(StreamMemoryTest, MaxMemoryRefusesAPutThatDoesNotFit) {
  ServerProcess server({"--maxmemory", "1000000"});
  RawClient writer = RawClient::tcp(server.port()), reader = RawClient::tcp(server.port());
  const std::string s = "s:memory";
  ASSERT_TRUE(writer.call({"SS.STREAM.WRITE", s, "0", "1", "node0"}).is_ok());
  ASSERT_TRUE(reader.call({"SS.STREAM.JOIN", s, "g", "0", "1", "node0"}).is_ok());
  ASSERT_TRUE(writer.call({"SS.STREAM.BEGIN", s, "0", "0"}).is_ok());
  auto used = [&] { return used_memory(writer); };
  const auto before = used();
  RespReply refused = writer.call({"SS.STREAM.PUT", s, "0", "0", "c", "UINT8", "2000000", "0",
                                   "2000000", std::string(2000000, 'x')});
  ASSERT_TRUE(refused.is_error());
  EXPECT_EQ(refused.text.rfind("OOM ", 0), 0u) << refused.text;
  EXPECT_NE(refused.text.find("2000000 bytes"), std::string::npos) << refused.text;
  ASSERT_TRUE(writer
                  .call({"SS.STREAM.PUT", s, "0", "0", "c", "UINT8", "2000000", "0", "400000",
                         std::string(400000, 'x')})
                  .is_ok());
  EXPECT_GE(used(), before + 400000);  // the chunk counts against --maxmemory
  ASSERT_TRUE(writer.call({"SS.STREAM.END", s, "0", "0"}).is_error());  // once: a put was refused
  ASSERT_TRUE(writer.call({"SS.STREAM.END", s, "0", "0"}).is_ok());
  ASSERT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0"}).elements.at(0).text, "step");
  ASSERT_TRUE(reader.call({"SS.STREAM.RELEASE", s, "g", "0", "0"}).is_ok());
  EXPECT_LT(used(), before + 400000);  // freed with the step
}


// A stream's metadata (attributes, chunk tables, host and group names) counts against
// --maxmemory like its chunks: attributes set again and again under new names are refused with
// -OOM once they reach the limit (before, RSS grew without bound while used_memory stayed at 0),
// and each name and value has a cap of its own.
TEST(StreamMemoryTest, MetadataCountsAgainstMaxMemoryAndHasCaps) {
  ServerProcess server({"--maxmemory", std::to_string(4 << 20)});
  RawClient writer = RawClient::tcp(server.port()), reader = RawClient::tcp(server.port());
  const std::string s = "s:metadata";
  auto used = [&] { return used_memory(writer); };
  const auto before = used();
  ASSERT_TRUE(writer.call({"SS.STREAM.WRITE", s, "0", "1", "node0"}).is_ok());
  ASSERT_TRUE(reader.call({"SS.STREAM.JOIN", s, "g", "0", "1", "node0"}).is_ok());
  // Caps: a host name, group name, attribute name and an attribute's values.
  const RespReply long_host =
      reader.call({"SS.STREAM.JOIN", s, "h", "0", "1", std::string(256, 'h')});
  EXPECT_NE(long_host.text.find("hostname must be 1 to 255 bytes"), std::string::npos)
      << long_host.text;
  const RespReply long_group =
      reader.call({"SS.STREAM.JOIN", s, std::string(257, 'g'), "0", "1", "node0"});
  EXPECT_NE(long_group.text.find("group name must be 1 to 256 bytes"), std::string::npos)
      << long_group.text;
  const RespReply big_value = writer.call(
      {"SS.STREAM.ATTR", s, "0", "-1", "/", "big", "string", std::string((1 << 20) + 1, 'v')});
  EXPECT_NE(big_value.text.find("at most 1048576"), std::string::npos) << big_value.text;
  const RespReply many_dims = writer.call({"SS.STREAM.ATTR", s, "0", "-1", "/",
                                           std::string(257, 'n'), "int", "1"});
  EXPECT_NE(many_dims.text.find("attribute name must be 1 to 256 bytes"), std::string::npos)
      << many_dims.text;
  // 512 KiB attributes under new names: counted, then refused at the limit.
  const std::string value(512 * 1024, 'v');
  int accepted = 0;
  RespReply refused;
  for (int i = 0; i < 32; ++i) {
    RespReply reply = writer.call(
        {"SS.STREAM.ATTR", s, "0", "-1", "/", "a" + std::to_string(i), "string", value});
    if (reply.is_error()) {
      refused = reply;
      break;
    }
    ++accepted;
  }
  EXPECT_GE(accepted, 2);
  EXPECT_LT(accepted, 8) << "attributes beyond --maxmemory were accepted";
  EXPECT_EQ(refused.text.rfind("OOM ", 0), 0u) << refused.text;
  EXPECT_GE(used(), before + static_cast<std::size_t>(accepted) * value.size());
  // Setting an attribute again replaces its value and its count.
  const auto with_attributes = used();
  ASSERT_TRUE(writer.call({"SS.STREAM.ATTR", s, "0", "-1", "/", "a0", "int", "7"}).is_ok());
  EXPECT_LT(used(), with_attributes - value.size() / 2);
}

// BUG (issue 26.C5): nothing deleted a stream and FLUSHALL left streams alone, so a stream that
// filled --maxmemory made every later write fail with -OOM. SS.STREAM.DELETE gives its memory back
// at once and answers its parked requests; FLUSHALL deletes every stream.
TEST(StreamMemoryTest, DeleteAndFlushAllGiveAStreamsMemoryBack) {
  ServerProcess server({"--maxmemory", "8mb"});
  RawClient writer = RawClient::tcp(server.port()), reader = RawClient::tcp(server.port());
  RawClient admin = RawClient::tcp(server.port());
  const std::string chunk(3 << 20, 'x');
  auto fill = [&](RawClient& w, const std::string& s) {  // two 3 MiB steps nobody reads
    ASSERT_TRUE(w.call({"SS.STREAM.WRITE", s, "0", "1", "node0", "EXPECT-GROUPS", "1"})
                    .is_ok());
    for (const char* step : {"0", "1"}) {
      ASSERT_TRUE(w.call({"SS.STREAM.BEGIN", s, "0", step}).is_ok());
      ASSERT_TRUE(w.call({"SS.STREAM.PUT", s, "0", step, "c", "UINT8",
                               std::to_string(chunk.size()), "0", std::to_string(chunk.size()),
                               chunk})
                      .is_ok());
      ASSERT_TRUE(w.call({"SS.STREAM.END", s, "0", step}).is_ok());
    }
  };
  const std::size_t before = used_memory(admin);
  fill(writer, "s:deleted");
  ASSERT_GE(used_memory(admin), before + 2 * chunk.size());
  EXPECT_EQ(admin.call({"SET", "k", chunk}).text.rfind("OOM ", 0), 0u);  // full
  // A reader of another group parked on the stream is answered when it goes.
  ASSERT_TRUE(reader.call({"SS.STREAM.JOIN", "s:deleted", "late", "0", "1", "node0", "START",
                           "newest"})
                  .is_ok());
  reader.send({"SS.STREAM.NEXT", "s:deleted", "late", "0"});
  for (int attempt = 0; attempt < 3000; ++attempt) {  // parked (on another connection)
    if (admin.call({"INFO", "clients"}).text.find("blocked_clients:1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(admin.call({"SS.STREAM.DELETE", "s:deleted", "s:none"}).str(), ":1");
  EXPECT_EQ(reader.read_reply().str(), "-ERR stream 's:deleted' was deleted");
  EXPECT_LT(used_memory(admin), before + chunk.size());
  EXPECT_TRUE(admin.call({"SET", "k", chunk}).is_ok());
  EXPECT_EQ(admin.call({"DEL", "k"}).str(), ":1");
  const RespReply gone = writer.call({"SS.STREAM.BEGIN", "s:deleted", "0", "2"});
  EXPECT_NE(gone.text.find("no stream named 's:deleted'"), std::string::npos) << gone.str();
  EXPECT_NE(admin.call({"SS.STREAM.INFO", "s:deleted"}).text.find("no stream"), std::string::npos);
  // FLUSHALL: the same for every stream (FLUSHDB leaves them).
  RawClient second = RawClient::tcp(server.port());
  fill(second, "s:flushed");
  ASSERT_TRUE(admin.call({"FLUSHDB"}).is_ok());
  EXPECT_GE(used_memory(admin), before + 2 * chunk.size());
  ASSERT_TRUE(admin.call({"FLUSHALL"}).is_ok());
  EXPECT_LT(used_memory(admin), before + chunk.size());
  EXPECT_NE(admin.call({"INFO", "streams"}).text.find("streams:0"), std::string::npos);
}

// A surviving writer that had not begun the step another writer's death aborted: its BEGIN says
// ABORTED, and the C++ writer then goes through the step sending nothing (end_step() is false)
// and on to the next, which readers get whole.
TEST_F(StreamTest, SurvivorOfAnAbortedStepGoesOnWithTheNext) {
  const std::string s = stream_name();
  auto dying = std::make_unique<RawClient>(client());
  RawClient reader = client();
  ok(*dying, {"SS.STREAM.WRITE", s, "1", "2", "node1"});
  ok(reader, {"SS.STREAM.JOIN", s, "g", "0", "1", "node0"});
  ClientOptions options;
  options.address = "tcp://127.0.0.1:" + std::to_string(server_->port());
  StreamWriter survivor(options, s, 0, 2);
  ok(*dying, {"SS.STREAM.BEGIN", s, "1", "0"});
  dying.reset();  // writer 1 dies in step 0, which writer 0 has not begun
  EXPECT_EQ(reader.call({"SS.STREAM.NEXT", s, "g", "0"}).elements.at(0).text, "skipped");
  const std::vector<std::uint64_t> global{4}, offset{0}, extent{4};
  const std::vector<std::int32_t> values{1, 2, 3, 4};
  survivor.begin_step(0);
  survivor.put_chunk<std::int32_t>(kMesh, global, offset, extent, values);
  survivor.set_attribute("/", "time", 0.0);
  EXPECT_FALSE(survivor.end_step());
  EXPECT_NE(survivor.last_abort_reason().find("writer 1 disconnected during step 0"),
            std::string::npos) << survivor.last_abort_reason();
  survivor.begin_step(1);
  survivor.put_chunk<std::int32_t>(kMesh, global, offset, extent, values);
  EXPECT_TRUE(survivor.end_step());
  Step got = parse_step(reader.call({"SS.STREAM.NEXT", s, "g", "0"}));
  EXPECT_EQ(got.number, 1);
}

// ---- Shared-memory segments --------------------------------------------------------------------

class StreamShmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess({"--threads", "2"}); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static RawClient attached() {
    RawClient c = RawClient::unix_socket(server_->unix_socket());
    EXPECT_TRUE(c.call({"SS.SHM.ATTACH"}).is_ok());
    return c;
  }
  static ServerProcess* server_;
};
ServerProcess* StreamShmTest::server_ = nullptr;

// The I/O thread of the connection named `name`, from CLIENT LIST ("" when none is listed).
std::string io_thread_of(RawClient& c, const std::string& name) {
  std::istringstream lines(c.call({"CLIENT", "LIST"}).text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" name=" + name + " ") == std::string::npos) continue;
    const auto at = line.find(" io-thread=");
    if (at == std::string::npos) return "";
    return line.substr(at + 11, line.find_first_of(" \r", at + 11) - at - 11);
  }
  return "";
}

// A reader that sends JOIN and a NEXT that waits in one write cannot move to its stream's I/O
// thread after the JOIN (its NEXT is parked then); it moves when its next request arrives, before
// that request runs, and its steps still arrive. (It stayed on its first thread for good when
// the move was tried only after requests ran: each NEXT parked first.)
TEST_F(StreamShmTest, AMovePutOffBehindAParkedNextHappensWithTheNextRequest) {
  const std::string s = "s:deferred-move";
  RawClient writer = attached();
  RawClient reader = attached();  // accepted onto the other thread: the server takes turns
  ASSERT_TRUE(writer.call({"CLIENT", "SETNAME", "w"}).is_ok());
  ASSERT_TRUE(reader.call({"CLIENT", "SETNAME", "r"}).is_ok());
  ASSERT_NE(io_thread_of(writer, "w"), io_thread_of(writer, "r"));
  ASSERT_TRUE(writer.call({"SS.STREAM.WRITE", s, "0", "1", "node0"}).is_ok());
  reader.send_raw(RawClient::encode({"SS.STREAM.JOIN", s, "g", "0", "1", "node0"}) +
                  RawClient::encode({"SS.STREAM.NEXT", s, "g", "0", "TIMEOUT", "5000"}));
  ASSERT_TRUE(reader.read_reply().is_ok());
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(writer.call({"SS.STREAM.BEGIN", s, "0", std::to_string(step)}).is_ok());
    ASSERT_TRUE(writer.call({"SS.STREAM.PUT", s, "0", std::to_string(step), "meshes/rho", "INT8",
                             "4", "0", "4", "abcd"})
                    .is_ok());
    ASSERT_TRUE(writer.call({"SS.STREAM.END", s, "0", std::to_string(step)}).is_ok());
    RespReply got = reader.read_reply();  // the NEXT sent last
    ASSERT_EQ(got.kind, RespReply::Kind::kArray) << got.str();
    EXPECT_EQ(got.elements.at(1).integer, step);
    reader.send({"SS.STREAM.NEXT", s, "g", "0", "RELEASE", std::to_string(step), "TIMEOUT",
                 "5000"});
    // Let the NEXT arrive and park before the step it waits for is written (it would move at
    // once if the step were complete when it came).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(io_thread_of(writer, "r"), io_thread_of(writer, "w"));
  ASSERT_TRUE(writer.call({"SS.STREAM.CLOSE", s, "0"}).is_ok());
  RespReply end = reader.read_reply();
  ASSERT_EQ(end.kind, RespReply::Kind::kArray) << end.str();
  EXPECT_EQ(end.elements.at(0).text, "end");
}

// A writer gets a segment, maps it writable and fills it; once named in PUTSEG, nobody else can
// write it: a reader handed its descriptor cannot map it writable, write it, resize it, or reopen
// it writable; another writer rank cannot name it; and the reader sees exactly what was written.
TEST_F(StreamShmTest, SegmentsAreWritableOnlyByTheirWriter) {
  const std::string s = "s:segments";
  RawClient writer = attached();
  RawClient other = attached();
  RawClient reader = attached();
  ASSERT_TRUE(writer.call({"SS.STREAM.WRITE", s, "0", "2", "node0", "EXPECT-GROUPS", "1"}).is_ok());
  ASSERT_TRUE(other.call({"SS.STREAM.WRITE", s, "1", "2", "node0", "EXPECT-GROUPS", "1"}).is_ok());
  ASSERT_TRUE(reader.call({"SS.STREAM.JOIN", s, "g", "0", "1", "node0", "STRATEGY", "blocks"})
                  .is_ok());
  constexpr std::size_t kBytes = 64 * 1024;
  ASSERT_TRUE(writer.call({"SS.STREAM.BEGIN", s, "0", "0"}).is_ok());
  ASSERT_TRUE(other.call({"SS.STREAM.BEGIN", s, "1", "0"}).is_ok());
  RespReply lent = writer.call({"SS.STREAM.SEGMENTS", s, "0", "0", std::to_string(kBytes)});
  ASSERT_EQ(lent.kind, RespReply::Kind::kArray) << lent.str();
  const std::string id = std::to_string(lent.elements.at(0).elements.at(0).elements.at(0).integer);
  EXPECT_EQ(lent.elements[0].elements[0].elements.at(1).integer, 1);  // fresh: a descriptor came
  EXPECT_EQ(lent.elements[0].elements[0].elements.at(2).integer,  // 64 KiB is its own size class
            static_cast<long long>(kBytes));
  const int writer_fd = writer.take_fd();
  ASSERT_GE(writer_fd, 0);
  void* mapped = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, writer_fd, 0);
  ASSERT_NE(mapped, MAP_FAILED) << std::strerror(errno);
  std::memset(mapped, 0x5a, kBytes);
  EXPECT_NE(::ftruncate(writer_fd, kBytes / 2), 0);  // the size is sealed from the start
  ::close(writer_fd);
  // Rank 1 cannot use rank 0's segment, nor can a segment hold a chunk larger than itself.
  RespReply stolen = other.call({"SS.STREAM.PUTSEG", s, "1", "0", "meshes/rho", "UINT8",
                                 std::to_string(2 * kBytes), "0", std::to_string(kBytes), id});
  EXPECT_NE(stolen.text.find("was not lent to writer 1"), std::string::npos) << stolen.str();
  RespReply wrong = writer.call({"SS.STREAM.PUTSEG", s, "0", "0", "meshes/rho", "UINT8",
                                 std::to_string(2 * kBytes), "0", std::to_string(kBytes + 1), id});
  EXPECT_NE(wrong.text.find("the chunk's extent needs " + std::to_string(kBytes + 1)),
            std::string::npos)
      << wrong.str();
  ASSERT_TRUE(writer
                  .call({"SS.STREAM.PUTSEG", s, "0", "0", "meshes/rho", "UINT8",
                         std::to_string(2 * kBytes), "0", std::to_string(kBytes), id})
                  .is_ok());
  // The refused PUTSEG above refuses END once.
  EXPECT_TRUE(writer.call({"SS.STREAM.END", s, "0", "0"}).is_error());
  ASSERT_TRUE(writer.call({"SS.STREAM.END", s, "0", "0"}).is_ok());
  ASSERT_TRUE(other.call({"SS.STREAM.PUT", s, "1", "0", "meshes/rho", "UINT8",
                          std::to_string(2 * kBytes), std::to_string(kBytes),
                          std::to_string(kBytes), std::string(kBytes, 'b')})
                  .is_ok());
  EXPECT_TRUE(other.call({"SS.STREAM.END", s, "1", "0"}).is_error());  // its PUTSEG was refused
  ASSERT_TRUE(other.call({"SS.STREAM.END", s, "1", "0"}).is_ok());

  RespReply next = reader.call({"SS.STREAM.NEXT", s, "g", "0"});
  ASSERT_EQ(next.elements.at(0).text, "step") << next.str();
  RespReply view = reader.call({"SS.STREAM.VIEW", s, "g", "0", "0", "0", "1"});
  ASSERT_EQ(view.elements.size(), 2u) << view.str();
  ASSERT_EQ(view.elements[0].kind, RespReply::Kind::kArray);  // in a segment: a descriptor
  EXPECT_EQ(view.elements[0].elements.at(1).integer, static_cast<long long>(kBytes));
  EXPECT_EQ(view.elements[1].text, std::string(kBytes, 'b'));  // on the heap: bytes
  const int reader_fd = reader.take_fd();
  ASSERT_GE(reader_fd, 0);
  EXPECT_EQ(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, reader_fd, 0), MAP_FAILED);
  EXPECT_LT(::pwrite(reader_fd, "x", 1, 0), 0);
  EXPECT_NE(::ftruncate(reader_fd, 0), 0);
  const std::string reopened_path = "/proc/self/fd/" + std::to_string(reader_fd);
  const int reopened = ::open(reopened_path.c_str(), O_RDWR);
  if (reopened >= 0) {
    EXPECT_EQ(::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, reopened, 0),
              MAP_FAILED);
    ::close(reopened);
  }
  void* seen = ::mmap(nullptr, kBytes, PROT_READ, MAP_SHARED, reader_fd, 0);
  ASSERT_NE(seen, MAP_FAILED);
  EXPECT_EQ(::mprotect(seen, kBytes, PROT_READ | PROT_WRITE), -1);
  EXPECT_EQ(std::memcmp(seen, mapped, kBytes), 0);
  EXPECT_EQ(static_cast<const unsigned char*>(seen)[kBytes - 1], 0x5a);
  ::munmap(seen, kBytes);
  ::close(reader_fd);
  ::munmap(mapped, kBytes);
  // Over TCP there is no descriptor to pass: VIEW and SEGMENTS say so, GET copies the bytes.
  RawClient tcp = RawClient::tcp(server_->port());
  EXPECT_NE(tcp.call({"SS.STREAM.SEGMENTS", s, "0", "1", "10"}).text.find("SS.SHM.ATTACH"),
            std::string::npos);
  RespReply got = reader.call({"SS.STREAM.GET", s, "g", "0", "0", "0"});
  ASSERT_EQ(got.elements.size(), 1u);
  EXPECT_EQ(got.elements[0].text, std::string(kBytes, '\x5a'));
  ASSERT_TRUE(reader.call({"SS.STREAM.RELEASE", s, "g", "0", "0"}).is_ok());
}

// NEXT ... MAP CACHED: a reader keeps its mappings, so a segment's descriptor is passed to its
// connection once; the step after, the same segment is named with passed 0 and no descriptor.
// Once the reader says it dropped the mapping (DROPPED), the descriptor comes again. Plain MAP
// passes it every time.
TEST_F(StreamShmTest, MapCachedPassesASegmentsDescriptorOnceUntilTheReaderDropsIt) {
  const std::string s = "s:cached";
  RawClient writer = attached();
  RawClient reader = attached();
  ASSERT_TRUE(writer.call({"SS.STREAM.WRITE", s, "0", "1", "node0", "EXPECT-GROUPS", "1"}).is_ok());
  ASSERT_TRUE(reader.call({"SS.STREAM.JOIN", s, "g", "0", "1", "node0"}).is_ok());
  constexpr std::size_t kBytes = 64 * 1024;
  std::string segment;  // the writer's one segment, lent again at every step
  auto write_step = [&](int step) {
    const std::string n = std::to_string(step);
    ASSERT_TRUE(writer.call({"SS.STREAM.BEGIN", s, "0", n}).is_ok());
    RespReply lent = writer.call({"SS.STREAM.SEGMENTS", s, "0", n, std::to_string(kBytes)});
    ASSERT_EQ(lent.kind, RespReply::Kind::kArray) << lent.str();
    const RespReply& entry = lent.elements.at(0).elements.at(0);
    const std::string id = std::to_string(entry.elements.at(0).integer);
    if (segment.empty()) segment = id;
    ASSERT_EQ(id, segment) << "the freed segment is lent again";
    const int fd = writer.take_fd();
    if (entry.elements.at(1).integer == 1) {  // fresh: filled once
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::pwrite(fd, std::string(kBytes, 'c').data(), kBytes, 0),
                static_cast<ssize_t>(kBytes));
      ::close(fd);
    }
    ASSERT_TRUE(writer
                    .call({"SS.STREAM.PUTSEG", s, "0", n, "meshes/rho", "UINT8",
                           std::to_string(kBytes), "0", std::to_string(kBytes), id})
                    .is_ok());
    ASSERT_TRUE(writer.call({"SS.STREAM.END", s, "0", n}).is_ok());
  };
  // Reads step `step` and says whether its one chunk came with its descriptor; -1 on a bad reply.
  auto read_step = [&](int step, std::vector<std::string> next) -> int {
    RespReply got = reader.call(next);
    if (got.kind != RespReply::Kind::kArray || got.elements.size() != 9 ||
        got.elements[1].integer != step || got.elements[7].elements.size() != 1) {
      ADD_FAILURE() << got.str();
      return -1;
    }
    const RespReply& entry = got.elements[7].elements[0];
    const bool cached = next.size() > 7;
    EXPECT_EQ(entry.elements.size(), cached ? 4u : 3u) << got.str();
    EXPECT_EQ(std::to_string(entry.elements.at(1).integer), segment);
    const int fd = reader.take_fd();
    const bool passed = !cached || entry.elements.at(3).integer == 1;
    EXPECT_EQ(fd >= 0, passed) << "a descriptor comes exactly when the entry says so";
    if (fd >= 0) ::close(fd);
    EXPECT_TRUE(reader.call({"SS.STREAM.RELEASE", s, "g", "0", std::to_string(step)}).is_ok());
    return passed ? 1 : 0;
  };
  const std::vector<std::string> cached{"SS.STREAM.NEXT", s, "g", "0", "TIMEOUT", "5000",
                                        "MAP", "CACHED"};
  write_step(0);
  EXPECT_EQ(read_step(0, cached), 1);  // first time: passed
  write_step(1);
  EXPECT_EQ(read_step(1, cached), 0);  // mapped already: named only
  write_step(2);
  std::vector<std::string> dropped = cached;
  dropped.insert(dropped.end(), {"DROPPED", segment});
  EXPECT_EQ(read_step(2, dropped), 1);  // the reader let it go: passed again
  write_step(3);
  EXPECT_EQ(read_step(3, cached), 0);
  write_step(4);
  EXPECT_EQ(read_step(4, {"SS.STREAM.NEXT", s, "g", "0", "TIMEOUT", "5000", "MAP"}), 1);

  // Misuse: CACHED and DROPPED only after MAP (and CACHED), ids positive integers.
  EXPECT_NE(reader.call({"SS.STREAM.NEXT", s, "g", "0", "CACHED"}).text.find("syntax error"),
            std::string::npos);
  EXPECT_NE(reader.call({"SS.STREAM.NEXT", s, "g", "0", "MAP", "DROPPED", "7"})
                .text.find("syntax error"),
            std::string::npos);
  EXPECT_NE(reader.call({"SS.STREAM.NEXT", s, "g", "0", "MAP", "CACHED", "DROPPED", "x"})
                .text.find("segment id must be a positive integer, got 'x'"),
            std::string::npos);
}

}  // namespace
}  // namespace slipstream::testing
