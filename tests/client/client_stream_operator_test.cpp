// Compression operators on stream chunks (issue 31) against a real server: every operator and
// dtype round-trips through the socket and through shared-memory segments, by put_chunk and by
// loan_chunk, whole and cut (boxes across chunks); zfp stays within its accuracy element by
// element; bad operators, operators that do not fit the data, and corrupt or mislabelled frames
// are errors naming the component, never wrong numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "client_fixture.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::testing {
namespace {

constexpr std::uint64_t kRows = 64, kCols = 96;  // two chunks of 32 rows

// A compressible value that still changes from element to element and step to step.
double value(int step, std::uint64_t i) {
  return static_cast<double>((i * 7 + static_cast<std::uint64_t>(step)) % 101) - 50.0;
}

// Row-major bytes of `count` elements of `dtype` from `first` on.
std::vector<std::byte> elements(DType dtype, int step, std::uint64_t first, std::uint64_t count) {
  std::vector<std::byte> out(count * dtype_size(dtype));
  for (std::uint64_t i = 0; i < count; ++i) {
    const double v = value(step, first + i);
    std::byte* at = out.data() + i * dtype_size(dtype);
    auto put = [&](auto typed) { std::memcpy(at, &typed, sizeof(typed)); };
    switch (dtype) {
      case DType::kFloat32: put(static_cast<float>(v) * 0.5f); break;
      case DType::kFloat64: put(v * 0.25); break;
      case DType::kInt8: put(static_cast<std::int8_t>(v)); break;
      case DType::kInt16: put(static_cast<std::int16_t>(v * 100)); break;
      case DType::kInt32: put(static_cast<std::int32_t>(v * 1e6)); break;
      case DType::kInt64: put(static_cast<std::int64_t>(v * 1e12)); break;
      case DType::kUInt8: put(static_cast<std::uint8_t>(v + 50)); break;
      case DType::kUInt16: put(static_cast<std::uint16_t>((v + 50) * 300)); break;
      default: ADD_FAILURE() << "dtype " << dtype_name(dtype); break;
    }
  }
  return out;
}

const std::vector<DType> kDtypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,
                                    DType::kInt16,   DType::kInt32,   DType::kInt64,
                                    DType::kUInt8,   DType::kUInt16};

std::string component_of(const std::string& op, DType dtype) {
  return "meshes/" + op + "/" + std::string(dtype_name(dtype));
}

// Writes `steps` steps of every dtype under every lossless operator (one component each, two
// chunks: the first put, the second loaned) and checks that a reader gets every element back
// exactly, by load() and by a box across both chunks.
void round_trip_lossless(const std::string& address, std::size_t shared_memory_min_bytes) {
  ClientOptions options;
  options.address = address;
  const std::string name = unique("stream") + std::to_string(shared_memory_min_bytes);
  const std::map<std::string, StreamOperator> operators = {
      {"zstd", {"zstd", {{"level", "5"}}}},
      {"blosc", {"blosc", {{"clevel", "5"}, {"doshuffle", "BLOSC_SHUFFLE"}, {"compressor", "lz4"}}}},
      {"bzip2", {"bzip2", {{"blockSize100k", "9"}}}},
  };
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  writer_options.shared_memory_min_bytes = shared_memory_min_bytes;
  for (const auto& [op, spec] : operators) {
    for (DType dtype : kDtypes) writer_options.operators[component_of(op, dtype)] = spec;
  }
  StreamWriter writer(options, name, 0, 1, writer_options);
  StreamReader reader(options, name, "g", 0, 1);
  const std::vector<std::uint64_t> global{kRows, kCols}, half{kRows / 2, kCols};
  const std::vector<std::uint64_t> top{0, 0}, bottom{kRows / 2, 0};
  const std::uint64_t per_chunk = kRows / 2 * kCols;
  for (int step = 0; step < 3; ++step) {
    writer.begin_step(step);
    std::vector<std::vector<std::byte>> keep;  // put_chunk borrows until end_step
    for (const auto& [op, spec] : operators) {
      for (DType dtype : kDtypes) {
        const std::string component = component_of(op, dtype);
        const auto& first = keep.emplace_back(elements(dtype, step, 0, per_chunk));
        writer.put_chunk(component, dtype, global, top, half, first.data(), first.size());
        std::span<std::byte> loaned = writer.loan_chunk(component, dtype, global, bottom, half);
        const std::vector<std::byte> second = elements(dtype, step, per_chunk, per_chunk);
        ASSERT_EQ(loaned.size(), second.size());
        std::memcpy(loaned.data(), second.data(), second.size());
      }
    }
    ASSERT_TRUE(writer.end_step());
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    for (const auto& [op, spec] : operators) {
      for (DType dtype : kDtypes) {
        const std::string component = component_of(op, dtype);
        const std::size_t size = dtype_size(dtype);
        const std::vector<std::byte> expected = elements(dtype, step, 0, kRows * kCols);
        std::uint64_t checked = 0;
        for (const StreamPiece& piece : next.step->load(component)) {
          const std::uint64_t first = piece.piece.offset[0] * kCols;
          ASSERT_EQ(piece.bytes.size(), piece.piece.element_count() * size) << component;
          EXPECT_EQ(std::memcmp(piece.bytes.data(), expected.data() + first * size,
                                piece.bytes.size()),
                    0)
              << component << " step " << step;
          checked += piece.piece.element_count();
        }
        EXPECT_EQ(checked, kRows * kCols) << component;
        // A box across both chunks, cut in both dimensions.
        const std::vector<std::uint64_t> offset{20, 10}, extent{24, 50};
        std::vector<std::byte> box(24 * 50 * size);
        next.step->load_box(component, offset, extent, box.data());
        for (std::uint64_t r = 0; r < 24; ++r) {
          ASSERT_EQ(std::memcmp(box.data() + r * 50 * size,
                                expected.data() + ((20 + r) * kCols + 10) * size, 50 * size),
                    0)
              << component << " row " << r;
        }
      }
    }
  }
  writer.close();
  EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
}

TEST(StreamOperators, EveryLosslessOperatorAndDtypeRoundTripsExactlyOverTcp) {
  round_trip_lossless(shared_server().tcp_address(), 64 * 1024);
}

// Over the Unix socket, every encoded chunk goes through a shared-memory segment (the smallest
// size that does is one byte).
TEST(StreamOperators, EveryLosslessOperatorAndDtypeRoundTripsExactlyThroughSharedMemory) {
  round_trip_lossless(shared_server().unix_address(), 1);
}

// zfp in fixed-accuracy mode on float32 and float64 fields of 1 to 3 dimensions: every element
// within the accuracy, checked one by one; the encoded chunks are smaller than the raw ones (the
// server's memory for the step says so).
TEST(StreamOperators, ZfpStaysWithinItsAccuracyElementByElement) {
  for (const std::string& address : {shared_server().tcp_address(), shared_server().unix_address()}) {
    ClientOptions options;
    options.address = address;
    const std::string name = unique("stream") + (address == shared_server().tcp_address() ? "t" : "u");
    constexpr double kAccuracy = 1e-3;
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    writer_options.operators["*"] = {"zfp", {{"accuracy", "0.001"}}};
    StreamWriter writer(options, name, 0, 1, writer_options);
    StreamReader reader(options, name, "g", 0, 1);
    const std::vector<std::vector<std::uint64_t>> shapes = {{4096}, {64, 80}, {16, 24, 20}};
    writer.begin_step(0);
    std::vector<std::vector<double>> doubles;
    std::vector<std::vector<float>> floats;
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      std::uint64_t count = 1;
      for (std::uint64_t e : shapes[s]) count *= e;
      auto& d = doubles.emplace_back(count);
      auto& f = floats.emplace_back(count);
      for (std::uint64_t i = 0; i < count; ++i) {
        d[i] = std::sin(0.01 * static_cast<double>(i)) * 3.0 + 1e-4 * value(0, i);
        f[i] = static_cast<float>(d[i]);
      }
      const std::vector<std::uint64_t> zero(shapes[s].size(), 0);
      writer.put_chunk<double>("meshes/d" + std::to_string(s), shapes[s], zero, shapes[s],
                               std::span<const double>(d));
      writer.put_chunk<float>("meshes/f" + std::to_string(s), shapes[s], zero, shapes[s],
                              std::span<const float>(f));
    }
    ASSERT_TRUE(writer.end_step());
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      auto d = next.step->load("meshes/d" + std::to_string(s));
      auto f = next.step->load("meshes/f" + std::to_string(s));
      ASSERT_EQ(d.size(), 1u);
      ASSERT_EQ(f.size(), 1u);
      ASSERT_EQ(d[0].as<double>().size(), doubles[s].size());
      ASSERT_EQ(f[0].as<float>().size(), floats[s].size());
      double worst_d = 0, worst_f = 0;
      for (std::size_t i = 0; i < doubles[s].size(); ++i) {
        worst_d = std::max(worst_d, std::abs(d[0].as<double>()[i] - doubles[s][i]));
        worst_f = std::max(worst_f, static_cast<double>(std::abs(f[0].as<float>()[i] - floats[s][i])));
      }
      EXPECT_LE(worst_d, kAccuracy) << "shape " << s << " " << address;
      EXPECT_LE(worst_f, kAccuracy) << "shape " << s << " " << address;
      EXPECT_GT(worst_d, 0.0) << "zfp at 1e-3 is lossy on this data";
    }
    writer.close();
  }
}

TEST(StreamOperators, BadOperatorsAreRefusedNamingTheComponent) {
  ClientOptions options;
  options.address = shared_server().tcp_address();
  const std::string name = unique("stream");
  auto refused = [&](const StreamOperator& op, const std::string& expected) {
    StreamWriterOptions writer_options;
    writer_options.operators["meshes/E/x"] = op;
    try {
      StreamWriter writer(options, name, 0, 1, writer_options);
      ADD_FAILURE() << op.type << " was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("meshes/E/x"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused({"lz77", {}}, "zstd");                         // lists the operators there are
  refused({"sz", {{"accuracy", "0.1"}}}, "sz");           // ADIOS2's, not here
  refused({"zstd", {{"level", "40"}}}, "level");
  refused({"zfp", {{"accuracy", "0"}}}, "accuracy");
  refused({"zfp", {}}, "zfp");
  refused({"blosc", {{"doshuffle", "SOMETIMES"}}}, "doshuffle");
  refused({"bzip2", {{"speed", "3"}}}, "speed");

  // zfp on integers or 5 dimensions: refused at put, naming the component; the step goes on.
  StreamWriterOptions writer_options;
  writer_options.operators["particles/e/id"] = {"zfp", {{"rate", "8"}}};
  StreamWriter writer(options, name, 0, 1, writer_options);
  writer.begin_step(0);
  const std::vector<std::uint64_t> global{4}, offset{0}, extent{4};
  const std::vector<std::int64_t> ids{1, 2, 3, 4};
  try {
    writer.put_chunk<std::int64_t>("particles/e/id", global, offset, extent, ids);
    ADD_FAILURE() << "zfp on int64 was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("particles/e/id"), std::string::npos) << e.what();
  }
  EXPECT_THROW(writer.loan_chunk("particles/e/id", DType::kInt64, global, offset, extent),
               InvalidArgumentError);
  // Without the operator the same chunk goes as it is.
  writer.set_operator("particles/e/id", std::nullopt);
  writer.put_chunk<std::int64_t>("particles/e/id", global, offset, extent, ids);
  EXPECT_THROW(writer.set_operator("meshes/rho", StreamOperator{"zfp", {{"mode", "x"}}}),
               InvalidArgumentError);
  EXPECT_TRUE(writer.end_step());
  writer.close();
}

// Frames the server stores as they are: a reader never turns a corrupt, truncated or mislabelled
// one into numbers, and says which component it was. The server checks what it can (the size
// the writer declared against the bytes it sent; the ENCODED syntax).
TEST(StreamOperators, CorruptFramesAreErrorsNamingTheComponentNeverNumbers) {
  ClientOptions options;
  options.address = shared_server().tcp_address();
  const std::string name = unique("stream");
  Client raw(options);
  raw.command({"SS.STREAM.WRITE", name, "0", "1", "host", "EXPECT-GROUPS", "1"});
  StreamReader reader(options, name, "g", 0, 1);
  // 8 doubles: a frame's magic and garbage after it; random bytes.
  std::string garbage = "SSCF";
  for (int i = 0; i < 60; ++i) garbage.push_back(static_cast<char>(i * 37));
  const std::string random(100, '\x5a');
  raw.command({"SS.STREAM.BEGIN", name, "0", "0"});
  raw.command({"SS.STREAM.PUT", name, "0", "0", "meshes/bad", "DOUBLE", "8", "0", "8", garbage,
               "ENCODED", std::to_string(garbage.size())});
  raw.command({"SS.STREAM.PUT", name, "0", "0", "meshes/noise", "DOUBLE", "8", "0", "8", random,
               "ENCODED", "100"});
  raw.command({"SS.STREAM.END", name, "0", "0"});
  // What the server can check: the size declared against the bytes sent, and the syntax. A
  // refused put refuses the step's END (nothing half-visible).
  raw.command({"SS.STREAM.BEGIN", name, "0", "1"});
  EXPECT_THROW(raw.command({"SS.STREAM.PUT", name, "0", "1", "meshes/lie", "DOUBLE", "8", "0", "8",
                            random, "ENCODED", "99"}),
               ServerError);
  EXPECT_THROW(raw.command({"SS.STREAM.PUT", name, "0", "1", "meshes/lie", "DOUBLE", "8", "0", "8",
                            random, "ENCODING", "100"}),
               ServerError);
  EXPECT_THROW(raw.command({"SS.STREAM.PUT", name, "0", "1", "meshes/lie", "DOUBLE", "8", "0", "8",
                            random, "ENCODED", "0"}),
               ServerError);
  EXPECT_THROW(raw.command({"SS.STREAM.END", name, "0", "1"}), ServerError);
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  EXPECT_EQ(next.step->number(), 0);
  for (const std::string component : {"meshes/bad", "meshes/noise"}) {
    try {
      next.step->load(component);
      ADD_FAILURE() << component << " was decoded";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(component), std::string::npos) << e.what();
    }
    std::vector<double> box(8, -1.0);
    const std::vector<std::uint64_t> offset{0}, extent{8};
    EXPECT_THROW(next.step->load_box(component, offset, extent, box.data()), ProtocolError);
    for (double v : box) EXPECT_EQ(v, -1.0) << "nothing is copied from a corrupt frame";
  }
}

}  // namespace
}  // namespace slipstream::testing
