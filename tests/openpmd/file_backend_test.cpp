// The HDF5 file backend of the openPMD layer, used directly: a groupBased series written and read
// back element by element and attribute by attribute with exact types, a fileBased pattern,
// linear reading, datasets that grow, appending, and the errors of misuse and of hostile files.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <stdlib.h>

#include <array>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "openPMD/Error.hpp"
#include "openpmd/backend/file_backend.hpp"
#include "openpmd/config.hpp"

namespace openPMD::internal {
namespace {

namespace fs = std::filesystem;

// A private directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "slipstream-h5backend-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::unique_ptr<Backend> open(const std::string& path, Access access,
                              IterationEncoding encoding = IterationEncoding::groupBased,
                              int size = 1) {
  BackendTarget target;
  target.path = path;
  target.name = fs::path(path).stem().string();
  target.access = access;
  target.encoding = encoding;
  target.size = size;
  return make_file_backend(target, SeriesConfig{});
}

const AttributeEntry* find(const std::vector<AttributeEntry>& attributes, const std::string& path,
                           const std::string& name) {
  for (const AttributeEntry& a : attributes) {
    if (a.path == path && a.name == name) return &a;
  }
  return nullptr;
}

const ComponentLayout* find(const IterationLayout& layout, const std::string& path) {
  for (const ComponentLayout& c : layout.components) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

// An attribute as written and as it reads back (the same unless HDF5 has one type for two
// Datatypes: SCHAR is CHAR, LONGLONG is LONG on LP64).
struct Sample {
  std::string name;
  Attribute written;
  Attribute read;
};

std::vector<Sample> samples() {
  using cf = std::complex<float>;
  using cd = std::complex<double>;
  using cld = std::complex<long double>;
  return {
      {"char", char('q'), char('q')},
      {"uchar", static_cast<unsigned char>(250), static_cast<unsigned char>(250)},
      {"schar", static_cast<signed char>(-5), char(-5)},
      {"short", short(-300), short(-300)},
      {"int", -70000, -70000},
      {"long", -5000000000L, -5000000000L},
      {"longlong", -6000000000LL, -6000000000L},
      {"ushort", static_cast<unsigned short>(60000), static_cast<unsigned short>(60000)},
      {"uint", 4000000000U, 4000000000U},
      {"ulong", 18000000000000000000UL, 18000000000000000000UL},
      {"ulonglong", 17000000000000000000ULL, 17000000000000000000UL},
      {"float", 1.5F, 1.5F},
      {"double", 0.1, 0.1},
      {"longdouble", 1.0L / 3.0L, 1.0L / 3.0L},
      {"cfloat", cf(1.5F, -2.5F), cf(1.5F, -2.5F)},
      {"cdouble", cd(0.1, 0.2), cd(0.1, 0.2)},
      {"clongdouble", cld(1.0L / 3.0L, -1.0L / 7.0L), cld(1.0L / 3.0L, -1.0L / 7.0L)},
      {"string", std::string("hello openPMD"), std::string("hello openPMD")},
      {"emptyString", std::string(), std::string()},
      {"vecChar", std::vector<char>{'a', 'b'}, std::vector<char>{'a', 'b'}},
      {"vecShort", std::vector<short>{-1, 2}, std::vector<short>{-1, 2}},
      {"vecInt", std::vector<int>{1, -2, 3}, std::vector<int>{1, -2, 3}},
      {"vecLong", std::vector<long>{-1L << 40}, std::vector<long>{-1L << 40}},
      {"vecUchar", std::vector<unsigned char>{0, 255}, std::vector<unsigned char>{0, 255}},
      {"vecUint", std::vector<unsigned int>{7U}, std::vector<unsigned int>{7U}},
      {"vecUlong", std::vector<unsigned long>{1UL << 63, 0},
       std::vector<unsigned long>{1UL << 63, 0}},
      {"vecFloat", std::vector<float>{0.5F, 0.25F}, std::vector<float>{0.5F, 0.25F}},
      {"vecDouble", std::vector<double>{1e-300, 1e300}, std::vector<double>{1e-300, 1e300}},
      {"vecLongDouble", std::vector<long double>{0.1L}, std::vector<long double>{0.1L}},
      {"vecCdouble", std::vector<cd>{cd(1, 2), cd(3, 4)}, std::vector<cd>{cd(1, 2), cd(3, 4)}},
      {"vecSchar", std::vector<signed char>{-1, 1}, std::vector<char>{-1, 1}},
      {"vecString", std::vector<std::string>{"a", "bcd", ""},
       std::vector<std::string>{"a", "bcd", ""}},
      {"emptyVecInt", std::vector<int>{}, std::vector<int>{}},
      {"unitDimension", std::array<double, 7>{1, 1, -3, -1, 0, 0, 0},
       std::array<double, 7>{1, 1, -3, -1, 0, 0, 0}},
      {"sevenDoubles", std::array<double, 7>{1, 2, 3, 4, 5, 6, 7},
       std::vector<double>{1, 2, 3, 4, 5, 6, 7}},
      {"yes", true, true},
      {"no", false, false},
  };
}

void expect_samples(const std::vector<AttributeEntry>& attributes, const std::string& path) {
  for (const Sample& s : samples()) {
    SCOPED_TRACE("attribute '" + s.name + "' at '" + path + "'");
    const AttributeEntry* a = find(attributes, path, s.name);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->value.dtype, s.read.dtype);
    EXPECT_TRUE(a->value.getResource() == s.read.getResource());
  }
}

std::vector<AttributeEntry> sample_entries(const std::string& path) {
  std::vector<AttributeEntry> out;
  for (const Sample& s : samples()) out.push_back({path, s.name, s.written});
  return out;
}

constexpr std::uint64_t kRows = 4, kCols = 6, kParticles = 5;

double field(std::uint64_t iteration, std::uint64_t r, std::uint64_t c) {
  return static_cast<double>(iteration) + static_cast<double>(r) * 10 + static_cast<double>(c);
}

std::uint64_t id(std::uint64_t iteration, std::uint64_t k) {
  return (std::uint64_t{1} << 63) + iteration * 1000 + k;
}

// Iteration `i`: meshes/E/x (kRows x kCols doubles, two chunks of two rows), particles/e/id
// (uint64), the constant particles/e/charge, and attributes on the iteration, a record and a
// dataset.
void write_iteration(Backend& backend, std::uint64_t i) {
  backend.open_iteration(i);
  backend.define_dataset(i, "meshes/E/x", Datatype::DOUBLE, {kRows, kCols});
  std::vector<double> rows(kRows * kCols);
  for (std::uint64_t r = 0; r < kRows; ++r) {
    for (std::uint64_t c = 0; c < kCols; ++c) rows[r * kCols + c] = field(i, r, c);
  }
  const std::uint64_t half = kRows / 2;
  backend.write_chunks(i,
                       {{"meshes/E/x", Datatype::DOUBLE, {kRows, kCols}, {0, 0}, {half, kCols},
                         rows.data()},
                        {"meshes/E/x", Datatype::DOUBLE, {kRows, kCols}, {half, 0},
                         {kRows - half, kCols}, rows.data() + half * kCols}},
                       false);
  backend.define_dataset(i, "particles/e/id", Datatype::ULONG, {kParticles});
  std::vector<unsigned long> ids;
  for (std::uint64_t k = 0; k < kParticles; ++k) ids.push_back(id(i, k));
  backend.write_chunks(
      i, {{"particles/e/id", Datatype::ULONG, {kParticles}, {0}, {kParticles}, ids.data()}}, true);
  backend.write_attributes(i, {{"", "time", 1.0F}});  // replaced below with another type
  backend.write_attributes(
      i, {{"", "time", static_cast<double>(i) * 0.5},
          {"", "dt", 0.5},
          {"particles/e/charge", "value", -1.0},
          {"particles/e/charge", "shape", std::vector<unsigned long>{kParticles}},
          {"meshes/E", "geometry", std::string("cartesian")},
          {"meshes/E", "axisLabels", std::vector<std::string>{"y", "x"}},
          {"meshes/E/x", "position", std::vector<double>{0.5, 0.0}},
          {"meshes/E/x", "unitSI", 1.0}});
  backend.close_iteration(i);
}

void expect_iteration(Backend& backend, std::uint64_t i) {
  SCOPED_TRACE("iteration " + std::to_string(i));
  const IterationLayout layout = backend.read_iteration(i);
  EXPECT_EQ(layout.index, i);
  ASSERT_EQ(layout.components.size(), 2U);  // the constant is attributes only
  const ComponentLayout* e = find(layout, "meshes/E/x");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dtype, Datatype::DOUBLE);
  EXPECT_EQ(e->extent, (Extent{kRows, kCols}));
  EXPECT_EQ(e->chunks, (ChunkTable{WrittenChunkInfo({0, 0}, {kRows, kCols}, 0)}));
  const ComponentLayout* ids = find(layout, "particles/e/id");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->dtype, Datatype::ULONG);
  EXPECT_EQ(ids->extent, (Extent{kParticles}));

  const AttributeEntry* time = find(layout.attributes, "", "time");
  ASSERT_NE(time, nullptr);
  EXPECT_EQ(time->value.dtype, Datatype::DOUBLE);
  EXPECT_EQ(time->value.get<double>(), static_cast<double>(i) * 0.5);
  const AttributeEntry* value = find(layout.attributes, "particles/e/charge", "value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->value.get<double>(), -1.0);
  const AttributeEntry* shape = find(layout.attributes, "particles/e/charge", "shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->value.dtype, Datatype::VEC_ULONG);
  EXPECT_EQ(shape->value.get<std::vector<unsigned long>>(), std::vector<unsigned long>{kParticles});
  const AttributeEntry* labels = find(layout.attributes, "meshes/E", "axisLabels");
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(labels->value.dtype, Datatype::VEC_STRING);
  EXPECT_EQ(labels->value.get<std::vector<std::string>>(), (std::vector<std::string>{"y", "x"}));
  const AttributeEntry* geometry = find(layout.attributes, "meshes/E", "geometry");
  ASSERT_NE(geometry, nullptr);
  EXPECT_EQ(geometry->value.get<std::string>(), "cartesian");
  const AttributeEntry* position = find(layout.attributes, "meshes/E/x", "position");
  ASSERT_NE(position, nullptr);
  EXPECT_EQ(position->value.dtype, Datatype::VEC_DOUBLE);

  std::vector<double> whole(kRows * kCols, -1);
  std::vector<double> box(2 * 3, -1);
  std::vector<unsigned long> id_values(kParticles);
  backend.read_chunks(i, {{"meshes/E/x", Datatype::DOUBLE, {0, 0}, {kRows, kCols}, whole.data()},
                          {"meshes/E/x", Datatype::DOUBLE, {1, 2}, {2, 3}, box.data()},
                          {"particles/e/id", Datatype::ULONG, {0}, {kParticles},
                           id_values.data()}});
  for (std::uint64_t r = 0; r < kRows; ++r) {
    for (std::uint64_t c = 0; c < kCols; ++c) EXPECT_EQ(whole[r * kCols + c], field(i, r, c));
  }
  for (std::uint64_t r = 0; r < 2; ++r) {
    for (std::uint64_t c = 0; c < 3; ++c) EXPECT_EQ(box[r * 3 + c], field(i, r + 1, c + 2));
  }
  for (std::uint64_t k = 0; k < kParticles; ++k) EXPECT_EQ(id_values[k], id(i, k));
  // LONGLONG is ULONG's other name on LP64.
  backend.read_chunks(i, {{"particles/e/id", Datatype::ULONGLONG, {1}, {1}, id_values.data()}});
  EXPECT_EQ(id_values[0], id(i, 1));
}

TEST(FileBackend, GroupBasedRoundTripKeepsEveryElementAndExactType) {
  TempDir dir;
  const std::string path = dir / "series.h5";
  {
    auto writer = open(path, Access::CREATE);
    EXPECT_EQ(writer->name(), "HDF5");
    std::vector<AttributeEntry> root = sample_entries("");
    root.push_back({"", "openPMD", std::string("1.1.0")});
    root.push_back({"", "openPMDextension", 0U});
    root.push_back({"", "basePath", std::string("/data/%T/")});
    root.push_back({"", "iterationEncoding", std::string("groupBased")});
    writer->write_attributes(std::nullopt, root);
    write_iteration(*writer, 100);
    write_iteration(*writer, 200);
    std::vector<AttributeEntry> on_dataset = sample_entries("meshes/E/x");
    std::vector<AttributeEntry> on_record = sample_entries("meshes/E");
    std::vector<AttributeEntry> on_iteration = sample_entries("");
    on_iteration.insert(on_iteration.end(), on_record.begin(), on_record.end());
    on_iteration.insert(on_iteration.end(), on_dataset.begin(), on_dataset.end());
    writer->open_iteration(200);
    writer->write_attributes(200, on_iteration);
    writer->close_iteration(200);
    writer->close();
    writer->close();  // idempotent
  }
  auto reader = open(path, Access::READ_ONLY);
  EXPECT_EQ(reader->iterations(), (std::vector<std::uint64_t>{100, 200}));
  const std::vector<AttributeEntry> root = reader->series_attributes();
  expect_samples(root, "");
  const AttributeEntry* extension = find(root, "", "openPMDextension");
  ASSERT_NE(extension, nullptr);
  EXPECT_EQ(extension->value.dtype, Datatype::UINT);
  ASSERT_NE(find(root, "", "openPMD"), nullptr);
  EXPECT_EQ(find(root, "", "openPMD")->value.get<std::string>(), "1.1.0");
  expect_iteration(*reader, 100);
  expect_iteration(*reader, 200);
  const IterationLayout layout = reader->read_iteration(200);
  for (const char* at : {"", "meshes/E", "meshes/E/x"}) expect_samples(layout.attributes, at);
  reader->release_iteration(100);
  reader->close();
}

TEST(FileBackend, FileBasedWritesOneFilePerIterationWithTheRootAttributesInEach) {
  TempDir dir;
  const std::string pattern = dir / "out/data_%06T.h5";  // the directory is created
  {
    auto writer = open(pattern, Access::CREATE, IterationEncoding::fileBased);
    writer->write_attributes(std::nullopt, {{"", "openPMD", std::string("1.1.0")},
                                            {"", "iterationFormat", std::string("data_%06T.h5")}});
    writer->open_iteration(0);
    // Set while iteration 0's file is open: it gets them too.
    writer->write_attributes(std::nullopt, {{"", "author", std::string("me")}});
    writer->close_iteration(0);
    write_iteration(*writer, 5);
    writer->write_attributes(std::nullopt, {{"", "software", std::string("test")}});
    // Iteration 0 reopened: its file is kept, not truncated.
    writer->open_iteration(0);
    writer->define_dataset(0, "meshes/rho", Datatype::FLOAT, {2});
    const float rho[2] = {1.5F, 2.5F};
    writer->write_chunks(0, {{"meshes/rho", Datatype::FLOAT, {2}, {0}, {2}, rho}}, false);
    writer->close_iteration(0);
    writer->close();
  }
  EXPECT_TRUE(fs::exists(dir / "out/data_000000.h5"));
  EXPECT_TRUE(fs::exists(dir / "out/data_000005.h5"));

  auto reader = open(pattern, Access::READ_ONLY, IterationEncoding::fileBased);
  EXPECT_EQ(reader->iterations(), (std::vector<std::uint64_t>{0, 5}));
  const std::vector<AttributeEntry> root = reader->series_attributes();
  for (const char* name : {"openPMD", "iterationFormat", "author", "software"}) {
    EXPECT_NE(find(root, "", name), nullptr) << name;
  }
  expect_iteration(*reader, 5);
  const IterationLayout zero = reader->read_iteration(0);
  ASSERT_EQ(zero.components.size(), 1U);
  EXPECT_EQ(zero.components[0].path, "meshes/rho");
  EXPECT_EQ(zero.components[0].dtype, Datatype::FLOAT);
  float back[2] = {};
  reader->read_chunks(0, {{"meshes/rho", Datatype::FLOAT, {0}, {2}, back}});
  EXPECT_EQ(back[0], 1.5F);
  EXPECT_EQ(back[1], 2.5F);
  reader->release_iteration(0);

  // Each file is a series of its own with the root attributes set while it was open (the file
  // of iteration 5 was closed before `software` was set).
  for (const char* file : {"out/data_000000.h5", "out/data_000005.h5"}) {
    auto single = open(dir / file, Access::READ_ONLY);
    const std::vector<AttributeEntry> own = single->series_attributes();
    for (const char* name : {"openPMD", "iterationFormat", "author"}) {
      EXPECT_NE(find(own, "", name), nullptr) << file << ": " << name;
    }
    EXPECT_EQ(find(own, "", "software") != nullptr, std::string(file) == "out/data_000000.h5");
  }

  // Linear reading: ascending, then the end.
  auto linear = open(pattern, Access::READ_LINEAR, IterationEncoding::fileBased);
  std::vector<std::uint64_t> seen;
  while (auto layout = linear->next_iteration()) {
    seen.push_back(layout->index);
    linear->release_iteration(layout->index);
  }
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 5}));
  EXPECT_FALSE(linear->next_iteration().has_value());
}

TEST(FileBackend, DatasetsGrowAndEmptyOnesAreKept) {
  TempDir dir;
  const std::string path = dir / "grow.h5";
  {
    auto writer = open(path, Access::CREATE);
    writer->open_iteration(1);
    writer->define_dataset(1, "particles/e/position/x", Datatype::INT, {3});
    const int first[3] = {0, 1, 2};
    writer->write_chunks(1, {{"particles/e/position/x", Datatype::INT, {3}, {0}, {3}, first}},
                         false);
    writer->define_dataset(1, "particles/e/position/x", Datatype::INT, {7});
    const int second[4] = {3, 4, 5, 6};
    writer->write_chunks(1, {{"particles/e/position/x", Datatype::INT, {7}, {3}, {4}, second}},
                         false);
    writer->define_dataset(1, "meshes/B/z", Datatype::CDOUBLE, {2, 2});
    writer->define_dataset(1, "meshes/B/z", Datatype::CDOUBLE, {3, 2});
    const std::complex<double> row[2] = {{1, -1}, {2, -2}};
    writer->write_chunks(1, {{"meshes/B/z", Datatype::CDOUBLE, {3, 2}, {2, 0}, {1, 2}, row}},
                         false);
    writer->define_dataset(1, "meshes/empty", Datatype::BOOL, {0, 0});  // makeEmpty
    writer->define_dataset(1, "meshes/flags", Datatype::BOOL, {0});
    writer->define_dataset(1, "meshes/flags", Datatype::BOOL, {3});
    const bool flags[3] = {true, false, true};
    writer->write_chunks(1, {{"meshes/flags", Datatype::BOOL, {3}, {0}, {3}, flags}}, false);
    writer->define_dataset(1, "meshes/big", Datatype::FLOAT, {4096, 4096});  // 64 MiB, unwritten
    writer->close_iteration(1);
  }
  auto reader = open(path, Access::READ_ONLY);
  const IterationLayout layout = reader->read_iteration(1);
  ASSERT_NE(find(layout, "particles/e/position/x"), nullptr);
  EXPECT_EQ(find(layout, "particles/e/position/x")->extent, Extent{7});
  EXPECT_EQ(find(layout, "particles/e/position/x")->dtype, Datatype::INT);
  ASSERT_NE(find(layout, "meshes/B/z"), nullptr);
  EXPECT_EQ(find(layout, "meshes/B/z")->extent, (Extent{3, 2}));
  EXPECT_EQ(find(layout, "meshes/B/z")->dtype, Datatype::CDOUBLE);
  ASSERT_NE(find(layout, "meshes/empty"), nullptr);
  EXPECT_EQ(find(layout, "meshes/empty")->extent, (Extent{0, 0}));
  EXPECT_EQ(find(layout, "meshes/empty")->dtype, Datatype::BOOL);
  EXPECT_EQ(find(layout, "meshes/flags")->dtype, Datatype::BOOL);
  EXPECT_LT(fs::file_size(path), std::uintmax_t{1} << 20);  // chunked: nothing unwritten stored

  int x[7] = {};
  std::complex<double> z[6];
  bool flags[3] = {};
  reader->read_chunks(1, {{"particles/e/position/x", Datatype::INT, {0}, {7}, x},
                          {"meshes/B/z", Datatype::CDOUBLE, {0, 0}, {3, 2}, z},
                          {"meshes/flags", Datatype::BOOL, {0}, {3}, flags},
                          {"meshes/empty", Datatype::BOOL, {0, 0}, {0, 0}, nullptr}});
  for (int k = 0; k < 7; ++k) EXPECT_EQ(x[k], k);
  EXPECT_EQ(z[0], std::complex<double>(0, 0));  // grown, never written: the fill value
  EXPECT_EQ(z[4], std::complex<double>(1, -1));
  EXPECT_EQ(z[5], std::complex<double>(2, -2));
  EXPECT_TRUE(flags[0]);
  EXPECT_FALSE(flags[1]);
  EXPECT_TRUE(flags[2]);
}

TEST(FileBackend, ReadWriteAddsIterationsToAnExistingFile) {
  TempDir dir;
  const std::string path = dir / "append.h5";
  {
    auto writer = open(path, Access::CREATE);
    write_iteration(*writer, 100);
  }
  {
    auto appender = open(path, Access::READ_WRITE);
    EXPECT_EQ(appender->iterations(), std::vector<std::uint64_t>{100});
    write_iteration(*appender, 300);
  }
  auto reader = open(path, Access::READ_ONLY);
  EXPECT_EQ(reader->iterations(), (std::vector<std::uint64_t>{100, 300}));
  expect_iteration(*reader, 100);
  expect_iteration(*reader, 300);
}

template <typename Exception>
std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Exception& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "nothing thrown";
  return {};
}

TEST(FileBackend, MisuseIsWrongAPIUsageNamingThePath) {
  TempDir dir;
  const std::string path = dir / "misuse.h5";
  auto writer = open(path, Access::CREATE);
  writer->open_iteration(3);
  writer->define_dataset(3, "meshes/E/x", Datatype::DOUBLE, {4, 4});
  const double data[4] = {};

  std::string m = message_of<error::WrongAPIUsage>([&] {
    writer->write_chunks(3, {{"meshes/E/x", Datatype::DOUBLE, {4, 4}, {3, 3}, {2, 2}, data}},
                         false);
  });
  EXPECT_NE(m.find("meshes/E/x"), std::string::npos) << m;
  EXPECT_NE(m.find("misuse.h5"), std::string::npos) << m;
  EXPECT_NE(m.find("iteration 3"), std::string::npos) << m;
  m = message_of<error::WrongAPIUsage>(
      [&] { writer->define_dataset(3, "meshes/E/x", Datatype::INT, {4, 4}); });
  EXPECT_NE(m.find("meshes/E/x"), std::string::npos) << m;
  m = message_of<error::WrongAPIUsage>(
      [&] { writer->define_dataset(3, "meshes/E/x", Datatype::DOUBLE, {16}); });
  EXPECT_NE(m.find("meshes/E/x"), std::string::npos) << m;
  m = message_of<error::WrongAPIUsage>(
      [&] { writer->define_dataset(3, "meshes/E/x", Datatype::DOUBLE, {2, 4}); });
  EXPECT_NE(m.find("shrink"), std::string::npos) << m;
  message_of<error::WrongAPIUsage>(
      [&] { writer->define_dataset(3, "../../escape", Datatype::DOUBLE, {1}); });
  message_of<error::WrongAPIUsage>(
      [&] { writer->define_dataset(3, "meshes/s", Datatype::STRING, {1}); });
  message_of<error::WrongAPIUsage>(
      [&] { writer->write_attributes(3, {{"meshes/../..", "a", 1}}); });
  message_of<error::WrongAPIUsage>([&] {
    writer->write_chunks(3, {{"meshes/E/y", Datatype::DOUBLE, {1}, {0}, {1}, data}}, false);
  });
  writer->close();
  message_of<error::WrongAPIUsage>([&] { writer->open_iteration(4); });

  auto reader = open(path, Access::READ_ONLY);
  double out[4];
  m = message_of<error::WrongAPIUsage>([&] {
    reader->read_chunks(3, {{"meshes/E/x", Datatype::FLOAT, {0, 0}, {1, 1}, out}});
  });
  EXPECT_NE(m.find("meshes/E/x"), std::string::npos) << m;
  message_of<error::WrongAPIUsage>([&] {
    reader->read_chunks(3, {{"meshes/E/x", Datatype::DOUBLE, {0, 0}, {5, 1}, out}});
  });
  message_of<error::WrongAPIUsage>([&] { reader->open_iteration(5); });
  message_of<error::ReadError>([&] { reader->read_iteration(99); });
  message_of<error::ReadError>([&] {
    reader->read_chunks(3, {{"meshes/E/nothing", Datatype::DOUBLE, {0}, {1}, out}});
  });
}

TEST(FileBackend, WhatSerialHDF5CannotDoIsUnsupported) {
  TempDir dir;
  std::string m = message_of<error::OperationUnsupportedInBackend>(
      [&] { open(dir / "v.h5", Access::CREATE, IterationEncoding::variableBased); });
  EXPECT_NE(m.find("ADIOS2"), std::string::npos) << m;
  m = message_of<error::OperationUnsupportedInBackend>(
      [&] { open(dir / "p.h5", Access::CREATE, IterationEncoding::groupBased, 4); });
  EXPECT_NE(m.find("parallel HDF5"), std::string::npos) << m;
  { open(dir / "p.h5", Access::CREATE)->close(); }
  EXPECT_EQ(open(dir / "p.h5", Access::READ_ONLY, IterationEncoding::groupBased, 4)->iterations(),
            std::vector<std::uint64_t>{});
  const auto missing = [&] { open(dir / "missing.h5", Access::READ_ONLY); };
  try {
    missing();
    ADD_FAILURE() << "a missing file opened";
  } catch (const error::ReadError& e) {
    EXPECT_EQ(e.reason, error::ReadError::Reason::NotFound);
    EXPECT_EQ(e.affectedObject, error::ReadError::AffectedObject::File);
  }
  message_of<error::ReadError>(
      [&] { open(dir / "none_%T.h5", Access::READ_ONLY, IterationEncoding::fileBased); });
}

// A file with what the backend must not follow or cannot name: a dataset stored in another
// file, a soft link, and an attribute of two dimensions.
void write_hostile(const std::string& path, bool external) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t group = H5Gcreate2(file, "/data/1/meshes", lcpl, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[2] = {2, 2};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  if (external) H5Pset_external(create, "/etc/hostname", 0, 32);
  const hid_t dataset =
      H5Dcreate2(group, "rho", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, create, H5P_DEFAULT);
  const hid_t attribute = H5Acreate2(group, "matrix", H5T_NATIVE_INT, space, H5P_DEFAULT,
                                     H5P_DEFAULT);
  H5Lcreate_soft("/data/1/meshes/rho", group, "alias", H5P_DEFAULT, H5P_DEFAULT);
  H5Aclose(attribute);
  H5Dclose(dataset);
  H5Pclose(create);
  H5Sclose(space);
  H5Gclose(group);
  H5Pclose(lcpl);
  H5Fclose(file);
}

TEST(FileBackend, HostileFilesAreRefusedOrLeftOut) {
  TempDir dir;
  write_hostile(dir / "external.h5", true);
  auto reader = open(dir / "external.h5", Access::READ_ONLY);
  try {
    reader->read_iteration(1);
    ADD_FAILURE() << "a dataset in another file was read";
  } catch (const error::ReadError& e) {
    EXPECT_NE(std::string(e.what()).find("meshes/rho"), std::string::npos) << e.what();
    EXPECT_EQ(e.affectedObject, error::ReadError::AffectedObject::Dataset);
  }

  write_hostile(dir / "odd.h5", false);
  auto odd = open(dir / "odd.h5", Access::READ_ONLY);
  const IterationLayout layout = odd->read_iteration(1);
  ASSERT_EQ(layout.components.size(), 1U);  // not the soft link
  EXPECT_EQ(layout.components[0].path, "meshes/rho");
  EXPECT_EQ(find(layout.attributes, "meshes", "matrix"), nullptr);
  const auto& warnings = dynamic_cast<FileBackend&>(*odd).warnings();
  ASSERT_EQ(warnings.size(), 2U);
  for (const std::string& w : warnings) EXPECT_NE(w.find("odd.h5"), std::string::npos) << w;
}

// The file as other tools see it: h5py reads the exact types (skipped without h5py).
TEST(FileBackend, H5pyReadsTheTypes) {
  if (std::system("/usr/bin/python3 -c 'import h5py' 2>/dev/null") != 0) {
    GTEST_SKIP() << "no h5py for /usr/bin/python3";
  }
  TempDir dir;
  const std::string path = dir / "h5py.h5";
  {
    auto writer = open(path, Access::CREATE);
    writer->write_attributes(std::nullopt, sample_entries(""));
    write_iteration(*writer, 7);
  }
  const std::string script = dir / "check.py";
  std::FILE* out = std::fopen(script.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs(
      "import sys, h5py, numpy as np\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "a = f.attrs\n"
      "assert a['string'] == b'hello openPMD', a['string']\n"
      "assert a['yes'] == True and a['yes'].dtype == np.bool_, a['yes']\n"
      "assert a['cdouble'] == 0.1 + 0.2j, a['cdouble']\n"
      "assert a['ulong'].dtype == np.uint64 and a['ulong'] == 18000000000000000000\n"
      "assert list(a['vecString']) == [b'a', b'bcd', b''], a['vecString']\n"
      "assert a['float'].dtype == np.float32\n"
      "e = f['data/7/meshes/E/x'][()]\n"
      "assert e.shape == (4, 6) and e[3, 5] == 7 + 30 + 5, e\n"
      "assert f['data/7/particles/e/id'].dtype == np.uint64\n"
      "assert f['data/7/particles/e/charge'].attrs['value'] == -1.0\n",
      out);
  std::fclose(out);
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script + " " + path).c_str()), 0);
}

}  // namespace
}  // namespace openPMD::internal
