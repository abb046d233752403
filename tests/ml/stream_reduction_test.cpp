// Reductions at the source (issue 31, StreamWriterOptions::reductions) against a real server: a
// writer rank runs a function on its own chunks at end_step and the stream carries the result, one
// row per writer rank, with or without the inputs; inputs put and loaned, joined from several
// chunks; the output compressed by its own operator; provenance attributes; bad reductions and
// failing functions are errors naming the reduction that leave the step open. The last test runs
// a TorchScript file made by apps/pic/reductions.py: this program does not link
// libslipstream_local, so libslipstream loads it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "client/client_fixture.hpp"
#include "support/message_of.hpp"
#include "slipstream/stream.hpp"

namespace slipstream::testing {
namespace {

const std::string kX = "particles/e/position/x", kV = "particles/e/momentum/x";

// Clients of the shared server, through its Unix socket.
ClientOptions server_options() {
  ClientOptions options;
  options.address = shared_server().unix_address();
  return options;
}

// A writer's options for a stream one reader group reads.
StreamWriterOptions one_group() {
  StreamWriterOptions options;
  options.expected_groups = 1;
  return options;
}

// forward(x, v) -> [sum of x, sum of v, count of x]: float64, whatever the inputs' lengths.
ReductionFunction sums() {
  return [](std::span<const TensorRef> inputs) {
    EXPECT_EQ(inputs.size(), 2u);
    std::vector<double> out(3, 0.0);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(inputs[i].dtype, DType::kFloat64);
      const auto* values = static_cast<const double*>(inputs[i].data);
      const std::size_t n = inputs[i].bytes / sizeof(double);
      out[i] = std::accumulate(values, values + n, 0.0);
      if (i == 0) {
        EXPECT_EQ(inputs[i].shape.size(), 1u);
        EXPECT_EQ(static_cast<std::size_t>(inputs[i].shape[0]), n);
        out[2] = static_cast<double>(n);
      }
    }
    std::vector<Tensor> result;
    const std::vector<std::int64_t> shape{3};
    result.push_back(Tensor::copy_of<double>(out, shape));
    return result;
  };
}

std::vector<double> particles(std::uint32_t rank, int step, std::size_t n, double scale) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = scale * (static_cast<double>(rank) * 100 + static_cast<double>(i) + step * 0.5);
  }
  return v;
}

const StreamAttribute* find_attribute(const StreamStep& step, const std::string& path,
                                      const std::string& name) {
  for (const StreamAttribute& a : step.attributes()) {
    if (a.path == path && a.name == name) return &a;
  }
  return nullptr;
}

// Two writer ranks with different particle counts; rank 0 puts x in two chunks (put and loan),
// rank 1 loans x whole. The stream carries only the output, [2, 3], row r from rank r.
void ships_only_the_output(std::size_t shared_memory_min_bytes, bool send_inputs) {
  const ClientOptions options = server_options();
  const std::string name = unique("stream");
  StreamWriterOptions wo = one_group();
  wo.shared_memory_min_bytes = shared_memory_min_bytes;
  wo.reductions.push_back({{kX, kV}, "meshes/sums", "sums()", sums(), send_inputs});
  wo.operators["meshes/sums"] = StreamOperator{"zstd", {{"level", "3"}}};
  const std::uint32_t writers = 2;
  const std::size_t counts[2] = {3000, 5000};
  const std::uint64_t total = counts[0] + counts[1];
  std::vector<StreamWriter> w;
  for (std::uint32_t r = 0; r < writers; ++r) w.emplace_back(options, name, r, writers, wo);
  StreamReader reader(options, name, "g", 0, 1);
  for (int step = 0; step < 3; ++step) {
    std::vector<std::vector<double>> xs, vs;
    for (std::uint32_t r = 0; r < writers; ++r) {
      xs.push_back(particles(r, step, counts[r], 1.0));
      vs.push_back(particles(r, step, counts[r], -2.0));
    }
    const std::vector<std::uint64_t> global{total};
    for (std::uint32_t r = 0; r < writers; ++r) {
      const std::uint64_t first = r == 0 ? 0 : counts[0];
      w[r].begin_step(step);
      if (r == 0) {
        const std::uint64_t half = counts[0] / 2;
        w[r].put_chunk<double>(kX, global, std::vector<std::uint64_t>{0},
                               std::vector<std::uint64_t>{half},
                               std::span<const double>(xs[r].data(), half));
        auto loaned = w[r].loan_chunk<double>(kX, global, std::vector<std::uint64_t>{half},
                                              std::vector<std::uint64_t>{counts[0] - half});
        std::memcpy(loaned.data(), xs[r].data() + half, loaned.size_bytes());
      } else {
        auto loaned = w[r].loan_chunk<double>(kX, global, std::vector<std::uint64_t>{first},
                                              std::vector<std::uint64_t>{counts[r]});
        std::memcpy(loaned.data(), xs[r].data(), loaned.size_bytes());
      }
      w[r].put_chunk<double>(kV, global, std::vector<std::uint64_t>{first},
                             std::vector<std::uint64_t>{counts[r]}, vs[r]);
      ASSERT_TRUE(w[r].end_step());
    }
    StreamNext next = reader.next_step();
    ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
    StreamStep& s = *next.step;
    const StreamComponent* out = s.component("meshes/sums");
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->dtype, DType::kFloat64);
    EXPECT_EQ(out->global_extent, (std::vector<std::uint64_t>{writers, 3}));
    EXPECT_EQ(s.component(kX) != nullptr, send_inputs);
    EXPECT_EQ(s.component(kV) != nullptr, send_inputs);
    std::vector<double> rows(writers * 3, -1.0);
    s.load_box("meshes/sums", std::vector<std::uint64_t>{0, 0},
               std::vector<std::uint64_t>{writers, 3}, rows.data());
    for (std::uint32_t r = 0; r < writers; ++r) {
      EXPECT_EQ(rows[r * 3 + 0], std::accumulate(xs[r].begin(), xs[r].end(), 0.0)) << r;
      EXPECT_EQ(rows[r * 3 + 1], std::accumulate(vs[r].begin(), vs[r].end(), 0.0)) << r;
      EXPECT_EQ(rows[r * 3 + 2], static_cast<double>(counts[r])) << r;
    }
    if (send_inputs) {
      std::vector<double> x(total);
      s.load_box(kX, std::vector<std::uint64_t>{0}, global, x.data());
      EXPECT_EQ(std::vector<double>(x.begin(), x.begin() + counts[0]), xs[0]);
      EXPECT_EQ(std::vector<double>(x.begin() + counts[0], x.end()), xs[1]);
    }
    const StreamAttribute* source = find_attribute(s, "meshes/sums", "reductionSource");
    ASSERT_NE(source, nullptr);
    EXPECT_EQ(std::get<std::string>(source->value), "sums()");
    const StreamAttribute* inputs = find_attribute(s, "meshes/sums", "reductionInputs");
    ASSERT_NE(inputs, nullptr);
    EXPECT_EQ(std::get<std::vector<std::string>>(inputs->value),
              (std::vector<std::string>{kX, kV}));
    EXPECT_NE(find_attribute(s, "meshes/sums", "reductionLayout"), nullptr);
  }
  for (StreamWriter& writer : w) writer.close();
  EXPECT_EQ(reader.next_step().kind, StreamNext::Kind::kEnd);
}

TEST(StreamReduction, OnlyTheOutputTravelsOneRowPerWriterRankOverTheSocket) {
  ships_only_the_output(std::size_t(1) << 40, false);
}

TEST(StreamReduction, OnlyTheOutputTravelsOneRowPerWriterRankThroughSharedMemory) {
  ships_only_the_output(1024, false);
}

TEST(StreamReduction, InputsAreSentToWhenAsked) {
  ships_only_the_output(1024, true);
  ships_only_the_output(std::size_t(1) << 40, true);
}


TEST(StreamReduction, BadReductionsAreRefusedWhenTheWriterIsMade) {
  const ClientOptions options = server_options();
  const std::string name = unique("stream");
  auto refused = [&](StreamReduction reduction) {
    StreamWriterOptions wo;
    wo.reductions.push_back(std::move(reduction));
    return message_of<InvalidArgumentError>([&] { StreamWriter(options, name, 0, 1, wo); });
  };
  EXPECT_NE(refused({{kX}, "", "", sums(), false}).find("needs an output"), std::string::npos);
  EXPECT_NE(refused({{}, "meshes/o", "", sums(), false}).find("no inputs"), std::string::npos);
  EXPECT_NE(refused({{kX}, "meshes/o", "", {}, false}).find("neither a function nor a source"),
            std::string::npos);
  EXPECT_NE(refused({{kX, "meshes/o"}, "meshes/o", "", sums(), false}).find("is an input"),
            std::string::npos);
  const std::string missing = refused({{kX}, "meshes/o", "/nonexistent/model.pt", {}, false});
  EXPECT_NE(missing.find("reduction to 'meshes/o'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("/nonexistent/model.pt"), std::string::npos) << missing;
  StreamWriterOptions twice;
  twice.reductions.push_back({{kX}, "meshes/o", "", sums(), false});
  twice.reductions.push_back({{kV}, "meshes/o", "", sums(), false});
  EXPECT_NE(message_of<InvalidArgumentError>([&] { StreamWriter(options, name, 0, 1, twice); })
                .find("same output"),
            std::string::npos);
}

// A step whose input is missing, or whose function fails, fails end_step naming the reduction and
// stays open with nothing sent: put what is missing and end it again.
TEST(StreamReduction, AFailingReductionLeavesTheStepOpenAndNothingSent) {
  const ClientOptions options = server_options();
  const std::string name = unique("stream");
  bool fail = true;
  StreamWriterOptions wo = one_group();
  wo.reductions.push_back(
      {{kX, kV}, "meshes/sums", "", [&, inner = sums()](std::span<const TensorRef> in) {
         if (fail) throw std::runtime_error("the function says no");
         return inner(in);
       }});
  StreamWriter writer(options, name, 0, 1, wo);
  StreamReader reader(options, name, "g", 0, 1);
  const std::vector<double> x = particles(0, 0, 100, 1.0), v = particles(0, 0, 100, 3.0);
  const std::vector<std::uint64_t> global{100}, zero{0};
  writer.begin_step(0);
  writer.put_chunk<double>(kX, global, zero, global, x);
  std::string error = message_of<InvalidArgumentError>([&] { writer.end_step(); });
  EXPECT_NE(error.find("reduction to 'meshes/sums' in step 0"), std::string::npos) << error;
  EXPECT_NE(error.find("'" + kV + "' has no chunk"), std::string::npos) << error;
  writer.put_chunk<double>(kV, global, zero, global, v);
  error = message_of<InvalidArgumentError>([&] { writer.end_step(); });
  EXPECT_NE(error.find("the function says no"), std::string::npos) << error;
  // Chunks of one input that cannot be joined along their first dimension.
  fail = false;
  ASSERT_TRUE(writer.end_step());
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  std::vector<double> row(3);
  next.step->load_box("meshes/sums", std::vector<std::uint64_t>{0, 0},
                      std::vector<std::uint64_t>{1, 3}, row.data());
  EXPECT_EQ(row[2], 100.0);
  next.step->release();

  const std::vector<std::uint64_t> grid{4, 6};
  const std::vector<double> a(12, 1.0), b(12, 2.0);
  writer.begin_step(1);
  writer.put_chunk<double>(kX, grid, std::vector<std::uint64_t>{0, 0},
                           std::vector<std::uint64_t>{2, 6}, a);
  writer.put_chunk<double>(kX, grid, std::vector<std::uint64_t>{2, 0},
                           std::vector<std::uint64_t>{2, 3}, std::span<const double>(b.data(), 6));
  writer.put_chunk<double>(kV, global, zero, global, v);
  error = message_of<InvalidArgumentError>([&] { writer.end_step(); });
  EXPECT_NE(error.find("cannot be joined"), std::string::npos) << error;
  writer.close();
  // Step 1 never became visible: the writer closed inside it.
  for (;;) {
    StreamNext after = reader.next_step();
    ASSERT_NE(after.kind, StreamNext::Kind::kStep);
    if (after.kind == StreamNext::Kind::kEnd) break;
  }
}

// Two reductions, the second's output refused by its own operator (zfp on integers): end_step
// fails with nothing of either output queued, and once the operator is removed the step carries
// each output once.
TEST(StreamReduction, AnOutputItsOperatorRefusesQueuesNoOtherOutput) {
  const ClientOptions options = server_options();
  const std::string name = unique("stream");
  StreamWriterOptions wo = one_group();
  wo.reductions.push_back({{kX, kV}, "meshes/sums", "", sums(), false});
  wo.reductions.push_back({{kX}, "meshes/count", "", [](std::span<const TensorRef> in) {
                             std::vector<Tensor> out;
                             const std::vector<std::int64_t> n{
                                 static_cast<std::int64_t>(in[0].bytes / sizeof(double))};
                             const std::vector<std::int64_t> shape{1};
                             out.push_back(Tensor::copy_of<std::int64_t>(n, shape));
                             return out;
                           }});
  wo.operators["meshes/count"] = StreamOperator{"zfp", {{"accuracy", "0.1"}}};
  StreamWriter writer(options, name, 0, 1, wo);
  StreamReader reader(options, name, "g", 0, 1);
  const std::vector<double> x = particles(0, 0, 50, 1.0), v = particles(0, 0, 50, 2.0);
  const std::vector<std::uint64_t> global{50}, zero{0};
  writer.begin_step(0);
  writer.put_chunk<double>(kX, global, zero, global, x);
  writer.put_chunk<double>(kV, global, zero, global, v);
  EXPECT_NE(message_of<InvalidArgumentError>([&] { writer.end_step(); }).find("meshes/count"),
            std::string::npos);
  writer.set_operator("meshes/count", std::nullopt);
  ASSERT_TRUE(writer.end_step());
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  ASSERT_NE(next.step->component("meshes/sums"), nullptr);
  EXPECT_EQ(next.step->component("meshes/sums")->chunks.size(), 1u);
  ASSERT_NE(next.step->component("meshes/count"), nullptr);
  std::vector<std::int64_t> count(1, -1);
  next.step->load_box("meshes/count", std::vector<std::uint64_t>{0, 0},
                      std::vector<std::uint64_t>{1, 1}, count.data());
  EXPECT_EQ(count[0], 50);
  writer.close();
}

#ifdef SLIPSTREAM_REDUCTION_MODEL
// apps/pic/reductions.py's phase-space histogram (4 x-bins on [0, 1), 3 v-bins on [-1, 1]), given
// as a file: loaded through libslipstream_local, which this program does not link.
TEST(StreamReduction, ATorchScriptFileBinsEachRanksParticles) {
  const ClientOptions options = server_options();
  const std::string name = unique("stream");
  StreamWriterOptions wo = one_group();
  wo.reductions.push_back({{kX, kV}, "meshes/phase_space", SLIPSTREAM_REDUCTION_MODEL, {}, false});
  const std::uint32_t writers = 2;
  std::vector<StreamWriter> w;
  for (std::uint32_t r = 0; r < writers; ++r) w.emplace_back(options, name, r, writers, wo);
  StreamReader reader(options, name, "g", 0, 1);
  const std::size_t n = 1000;
  std::vector<std::vector<double>> xs(writers), vs(writers);
  std::vector<float> expected(writers * 12, 0.0f);
  for (std::uint32_t r = 0; r < writers; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const double x = std::fmod(0.37 * static_cast<double>(i * (r + 1)), 1.0);
      const double v = std::sin(static_cast<double>(i) * (1.0 + r)) * 1.2;  // some beyond 1
      xs[r].push_back(x);
      vs[r].push_back(v);
      const int ix = std::min(3, static_cast<int>(std::floor(x * 4)));
      const int iv = std::clamp(static_cast<int>(std::floor((v + 1.0) * 1.5)), 0, 2);
      expected[r * 12 + static_cast<std::size_t>(ix * 3 + iv)] += 1.0f;
    }
    w[r].begin_step(0);
    w[r].put_chunk<double>(kX, std::vector<std::uint64_t>{writers * n},
                           std::vector<std::uint64_t>{r * n}, std::vector<std::uint64_t>{n},
                           xs[r]);
    w[r].put_chunk<double>(kV, std::vector<std::uint64_t>{writers * n},
                           std::vector<std::uint64_t>{r * n}, std::vector<std::uint64_t>{n},
                           vs[r]);
    ASSERT_TRUE(w[r].end_step());
  }
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  const StreamComponent* out = next.step->component("meshes/phase_space");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->dtype, DType::kFloat32);
  EXPECT_EQ(out->global_extent, (std::vector<std::uint64_t>{writers, 4, 3}));
  EXPECT_EQ(next.step->component(kX), nullptr);
  std::vector<float> counts(writers * 12, -1.0f);
  next.step->load_box("meshes/phase_space", std::vector<std::uint64_t>{0, 0, 0},
                      std::vector<std::uint64_t>{writers, 4, 3}, counts.data());
  EXPECT_EQ(counts, expected);
  const StreamAttribute* source = find_attribute(*next.step, "meshes/phase_space",
                                                 "reductionSource");
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(std::get<std::string>(source->value), SLIPSTREAM_REDUCTION_MODEL);
  for (StreamWriter& writer : w) writer.close();
}
#endif

}  // namespace
}  // namespace slipstream::testing
