// `slipstream stream info|dump|replay` against a real server: two writers publish meshes, a
// particle species with a constant record and the standard's attributes; dump writes them as
// openPMD HDF5 (groupBased and fileBased), checked element by element and attribute by attribute
// with h5py (check_openpmd.py); replaying a dump and dumping it again gives the same files;
// hostile component names never leave the output; files that lead to other files or declare
// more than they hold are refused (replay), as are chunks far out in a huge extent (dump); info
// shows the queue and its groups; a stream written through operators dumps its decoded values.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "slipstream/stream.hpp"
#include "support/server_process.hpp"

#ifndef SLIPSTREAM_CONFORMANCE_SCRIPT
#error "SLIPSTREAM_CONFORMANCE_SCRIPT must name tests/openpmd/check_openpmd_file.py"
#endif
#ifndef SLIPSTREAM_CHECK_SCRIPT
#error "SLIPSTREAM_CHECK_SCRIPT must name check_openpmd.py"
#endif

namespace slipstream::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kRows = 8, kCols = 6, kParticles = 10;
const std::vector<std::int64_t> kSteps = {0, 10, 20};  // numbers need not be consecutive

ServerProcess& server() {
  static ServerProcess process;
  return process;
}

ClientOptions options() {
  ClientOptions o;
  o.address = server().tcp_address();
  return o;
}

// A private directory, removed with everything in it.
class TempDir {
 public:
  TempDir() : path_(make_temp_dir("slipstream-files")) {}
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Finished {
  int status = -1;
  std::string out, err;
  long max_rss_kib = 0;  ///< the process's peak resident memory
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts `args` with stdout and stderr in files; wait() collects it.
class Process {
 public:
  explicit Process(std::vector<std::string> args) {
    dir_ = make_temp_dir("slipstream-run");
    const std::string out = dir_ + "/out", err = dir_ + "/err";
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Process() {
    if (pid_ > 0) wait();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Finished wait() {
    Finished run;
    int status = 0;
    rusage usage{};
    ::wait4(pid_, &status, 0, &usage);
    run.max_rss_kib = usage.ru_maxrss;
    pid_ = -1;
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = read_file(dir_ + "/out");
    run.err = read_file(dir_ + "/err");
    return run;
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

Finished run(std::vector<std::string> args) { return Process(std::move(args)).wait(); }

std::vector<std::string> cli(std::vector<std::string> args) {
  args.insert(args.begin(), SLIPSTREAM_BINARY);
  return args;
}

Finished check_script(std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/python3", "-B", SLIPSTREAM_CHECK_SCRIPT});
  return run(std::move(args));
}

bool have_h5py() {
  static const bool found = run({"/usr/bin/python3", "-c", "import h5py"}).status == 0;
  return found;
}

double field(std::int64_t step, std::uint64_t row, std::uint64_t col) {
  return static_cast<double>(step) * 1000.0 + static_cast<double>(row * kCols + col);
}

// Writer `rank` of 2: rows [4 rank, 4 rank + 4) of meshes/E/x, E/y and rho as two chunks of two
// rows each; particles [6 rank, ...) of position/x and weighting; rank 0 adds the attributes and
// the constant record charge (attributes value and shape, no chunks).
void write_stream(const std::string& name, std::uint32_t rank) {
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;  // keep the steps until the dump has joined
  StreamWriter writer(options(), name, rank, 2, writer_options);
  if (rank == 0) {
    writer.set_stream_attribute("/", "author", std::string("slipstream test"));
    writer.set_stream_attribute("/", "comment", std::string("written by stream_files_test"));
    writer.set_stream_attribute("meshes/E", "fieldSmoothing", std::string("none"));
  }
  const std::vector<std::uint64_t> global = {kRows, kCols}, particles = {kParticles};
  for (std::size_t index = 0; index < kSteps.size(); ++index) {
    const std::int64_t step = kSteps[index];
    writer.begin_step(step);
    std::vector<std::vector<double>> ex(2), ey(2);
    std::vector<std::vector<float>> rho(2);
    std::vector<std::vector<std::uint64_t>> offsets;
    for (int half = 0; half < 2; ++half) {
      const std::uint64_t first = rank * 4 + static_cast<std::uint64_t>(half) * 2;
      for (std::uint64_t r = first; r < first + 2; ++r) {
        for (std::uint64_t c = 0; c < kCols; ++c) {
          ex[half].push_back(field(step, r, c));
          ey[half].push_back(-field(step, r, c));
          rho[half].push_back(static_cast<float>(step + 0.25 * static_cast<double>(r * kCols + c)));
        }
      }
      offsets.push_back({first, 0});
    }
    const std::vector<std::uint64_t> extent = {2, kCols};
    for (int half = 0; half < 2; ++half) {
      writer.put_chunk<double>("meshes/E/x", global, offsets[half], extent, ex[half]);
      writer.put_chunk<double>("meshes/E/y", global, offsets[half], extent, ey[half]);
      writer.put_chunk<float>("meshes/rho", global, offsets[half], extent, rho[half]);
    }
    const std::uint64_t first = rank == 0 ? 0 : 6, count = rank == 0 ? 6 : 4;
    std::vector<double> position;
    std::vector<float> weighting;
    for (std::uint64_t i = first; i < first + count; ++i) {
      position.push_back(static_cast<double>(step) + 0.5 * static_cast<double>(i));
      weighting.push_back(static_cast<float>(1 + i));
    }
    const std::vector<std::uint64_t> particle_offset = {first}, particle_extent = {count};
    writer.put_chunk<double>("particles/electrons/position/x", particles, particle_offset,
                             particle_extent, position);
    writer.put_chunk<float>("particles/electrons/weighting", particles, particle_offset,
                            particle_extent, weighting);
    if (rank == 0) {
      writer.set_attribute("/", "time", 0.5 * static_cast<double>(index));
      writer.set_attribute("/", "dt", 0.5);
      writer.set_attribute("/", "timeUnitSI", 1.0);
      writer.set_attribute("meshes/E", "geometry", std::string("cartesian"));
      writer.set_attribute("meshes/E", "dataOrder", std::string("C"));
      writer.set_attribute("meshes/E", "axisLabels", std::vector<std::string>{"y", "x"});
      writer.set_attribute("meshes/E", "gridSpacing", std::vector<double>{0.1, 0.2});
      writer.set_attribute("meshes/E", "gridGlobalOffset", std::vector<double>{0, 0});
      writer.set_attribute("meshes/E", "gridUnitSI", 1.0);
      writer.set_attribute("meshes/E", "unitDimension", std::vector<double>{1, 1, -3, -1, 0, 0, 0});
      writer.set_attribute("meshes/E", "timeOffset", 0.0);
      writer.set_attribute("meshes/E/x", "unitSI", 1.0);
      writer.set_attribute("meshes/E/x", "position", std::vector<double>{0.5, 0.0});
      writer.set_attribute("meshes/E/y", "unitSI", 1.0);
      writer.set_attribute("meshes/E/y", "position", std::vector<double>{0.0, 0.5});
      writer.set_attribute("particles/electrons/position", "unitDimension",
                           std::vector<double>{1, 0, 0, 0, 0, 0, 0});
      writer.set_attribute("particles/electrons/position", "timeOffset", 0.0);
      writer.set_attribute("particles/electrons/position/x", "unitSI", 1e-6);
      writer.set_attribute("particles/electrons/charge", "value", -1.0);
      writer.set_attribute("particles/electrons/charge", "shape",
                           std::vector<std::int64_t>{static_cast<std::int64_t>(kParticles)});
      writer.set_attribute("particles/electrons/charge", "unitSI", 1.602176634e-19);
      writer.set_attribute("particles/electrons/charge", "unitDimension",
                           std::vector<double>{0, 0, 1, 1, 0, 0, 0});
    }
    writer.end_step();
  }
  writer.close();
}

// Publishes the test stream from two writer threads while `dump_args` runs; returns the dump's
// result.
Finished write_and_dump(const std::string& name, const std::vector<std::string>& dump_args) {
  std::thread w0(write_stream, name, 0), w1(write_stream, name, 1);
  Finished dump = run(cli(dump_args));
  w0.join();
  w1.join();
  return dump;
}

std::vector<std::string> dump_args(const std::string& stream, const std::string& output) {
  return {"stream", "dump", "--address", server().tcp_address(), "--stream", stream, "--output",
          output, "--timeout", "15000"};
}

// Replays `input` into `stream` while dumping that stream to `output`.
void replay_and_dump(const std::string& input, const std::string& stream,
                     const std::string& output, const std::string& writers) {
  Process replay(cli({"stream", "replay", "--address", server().tcp_address(), "--stream", stream,
                      "--input", input, "--writers", writers, "--queue", "1"}));
  Finished dump = run(cli(dump_args(stream, output)));
  Finished replayed = replay.wait();
  ASSERT_EQ(replayed.status, 0) << replayed.err;
  EXPECT_NE(replayed.err.find("3 steps published"), std::string::npos) << replayed.err;
  ASSERT_EQ(dump.status, 0) << dump.err;
}

#define SKIP_WITHOUT_H5PY() \
  if (!have_h5py()) GTEST_SKIP() << "h5py for /usr/bin/python3 is not installed"

TEST(StreamFiles, DumpGroupBasedHoldsEveryElementAndStandardAttribute) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  const std::string output = dir / "series.h5";
  Finished dump = write_and_dump("files.group", dump_args("files.group", output));
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.err.find("3 steps written, 0 skipped"), std::string::npos) << dump.err;
  EXPECT_NE(dump.err.find("step 10 -> "), std::string::npos) << dump.err;  // progress
  Finished checked = check_script({"check", output, "--steps", "0,10,20", "--encoding", "groupBased"});
  EXPECT_EQ(checked.status, 0) << checked.err << checked.out;
}

TEST(StreamFiles, DumpFileBasedWritesOneFilePerStepAndReplaysFromThePattern) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  const std::string output = dir / "out_%T.h5";
  Finished dump = write_and_dump("files.file", dump_args("files.file", output));
  ASSERT_EQ(dump.status, 0) << dump.err;
  for (const char* name : {"out_0.h5", "out_10.h5", "out_20.h5"}) {
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  }
  Finished checked = check_script({"check", output, "--steps", "0,10,20", "--encoding", "fileBased"});
  EXPECT_EQ(checked.status, 0) << checked.err << checked.out;

  const std::string again = dir / "again_%06T.h5";
  replay_and_dump(output, "files.file.replayed", again, "2");
  EXPECT_TRUE(fs::exists(dir / "again_000010.h5"));
  // The same files, but for the pattern they name themselves by.
  Finished same = check_script({"compare", output, again, "--ignore", "iterationFormat"});
  EXPECT_EQ(same.status, 0) << same.err << same.out;
  Finished differs = check_script({"compare", output, again});
  EXPECT_NE(differs.err.find("iterationFormat"), std::string::npos) << differs.err;
}

// A stream of meshes only: the dump's files say nothing of particles (a particlesPath with no
// particles breaks the standard's rules), whichever the encoding.
TEST(StreamFiles, ADumpWithoutParticlesHasNoParticlesPath) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  for (const std::string& output : {dir / "meshes_only.h5", dir / "meshes_only_%T.h5"}) {
    const std::string stream = "files.meshes_only." + std::to_string(output.size());
    std::thread writer([&] {
      StreamWriterOptions writer_options;
      writer_options.expected_groups = 1;
      StreamWriter w(options(), stream, 0, 1, writer_options);
      const std::vector<std::uint64_t> global = {4}, offset = {0};
      const std::vector<double> rho = {1, 2, 3, 4};
      for (std::int64_t step : {0, 1}) {
        w.begin_step(step);
        w.put_chunk<double>("meshes/rho", global, offset, global, rho);
        w.end_step();
      }
      w.close();
    });
    Finished dump = run(cli(dump_args(stream, output)));
    writer.join();
    ASSERT_EQ(dump.status, 0) << dump.err;
    Finished checked = run({"/usr/bin/python3", "-B", SLIPSTREAM_CONFORMANCE_SCRIPT, output});
    EXPECT_EQ(checked.status, 0) << output << ": " << checked.out << checked.err;
  }
}

// Unsigned 32- and 64-bit components (particle patches' numParticles) go to the file with their
// type and come back from it on replay: they were dropped before.
TEST(StreamFiles, UnsignedComponentsSurviveDumpAndReplay) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  const std::string file = dir / "patches.h5";
  const std::vector<std::uint64_t> counts = {5, std::uint64_t{1} << 63};
  const std::vector<std::uint32_t> cells = {7, 4000000000u};
  auto publish = [&](const std::string& stream) {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    StreamWriter w(options(), stream, 0, 1, writer_options);
    const std::vector<std::uint64_t> global = {2}, offset = {0};
    w.begin_step(0);
    w.put_chunk<std::uint64_t>("particles/e/particlePatches/numParticles", global, offset, global,
                               counts);
    w.put_chunk<std::uint32_t>("particles/e/cell", global, offset, global, cells);
    w.end_step();
    w.close();
  };
  std::thread writer(publish, "files.unsigned");
  Finished dump = run(cli(dump_args("files.unsigned", file)));
  writer.join();
  ASSERT_EQ(dump.status, 0) << dump.err;
  Finished types = run({"/usr/bin/python3", "-c",
                        "import h5py, sys; f = h5py.File(sys.argv[1]); "
                        "print(f['data/0/particles/e/particlePatches/numParticles'].dtype, "
                        "f['data/0/particles/e/cell'].dtype)",
                        file});
  EXPECT_EQ(types.out, "uint64 uint32\n") << types.err;

  StreamReaderOptions reader_options;
  reader_options.next_timeout = std::chrono::seconds(30);
  StreamReader reader(options(), "files.unsigned.replayed", "check", 0, 1, reader_options);
  Finished replayed = run(cli({"stream", "replay", "--address", server().tcp_address(), "--stream",
                               "files.unsigned.replayed", "--input", file}));
  ASSERT_EQ(replayed.status, 0) << replayed.err;
  StreamNext next = reader.next_step();
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);
  const StreamComponent* patches = next.step->component("particles/e/particlePatches/numParticles");
  ASSERT_NE(patches, nullptr);
  EXPECT_EQ(patches->dtype, DType::kUInt64);
  std::vector<std::uint64_t> got(2);
  next.step->load_box(patches->name, std::vector<std::uint64_t>{0}, std::vector<std::uint64_t>{2},
                      got.data());
  EXPECT_EQ(got, counts);
  const StreamComponent* cell = next.step->component("particles/e/cell");
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->dtype, DType::kUInt32);
}

// A stream written through operators dumps its decoded values: exactly for a lossless operator,
// within the accuracy for zfp (the server holds only the encoded frames; the dump's reader decodes).
TEST(StreamFiles, CompressedStreamsDumpTheirDecodedValues) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  const std::string file = dir / "compressed.h5";
  constexpr std::size_t kCount = 4096;
  std::vector<double> field(kCount);
  std::vector<std::int64_t> ids(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    field[i] = std::sin(0.003 * static_cast<double>(i));
    ids[i] = static_cast<std::int64_t>(i * 7919 % 10007);
  }
  std::thread writer([&] {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    writer_options.operators["meshes/rho"] = {"zfp", {{"accuracy", "1e-6"}}};
    writer_options.operators["particles/e/id"] = {"zstd", {{"level", "3"}}};
    StreamWriter w(options(), "files.compressed", 0, 1, writer_options);
    const std::vector<std::uint64_t> global = {kCount}, offset = {0};
    w.begin_step(0);
    w.put_chunk<double>("meshes/rho", global, offset, global, field);
    w.put_chunk<std::int64_t>("particles/e/id", global, offset, global, ids);
    w.end_step();
    w.close();
  });
  Finished dump = run(cli(dump_args("files.compressed", file)));
  writer.join();
  ASSERT_EQ(dump.status, 0) << dump.err;
  Finished check = run({"/usr/bin/python3", "-c",
                        "import h5py, math, sys; f = h5py.File(sys.argv[1]); "
                        "rho = f['data/0/meshes/rho'][()]; ids = f['data/0/particles/e/id'][()]; "
                        "n = len(rho); "
                        "print(n, max(abs(rho[i] - math.sin(0.003 * i)) for i in range(n)) <= 1e-6, "
                        "all(int(ids[i]) == i * 7919 % 10007 for i in range(n)))",
                        file});
  EXPECT_EQ(check.out, "4096 True True\n") << check.err;
}

TEST(StreamFiles, ReplayedDumpDumpsToTheSameFile) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  const std::string first = dir / "first.h5", second = dir / "second.h5";
  Finished dump = write_and_dump("files.round", dump_args("files.round", first));
  ASSERT_EQ(dump.status, 0) << dump.err;
  // Three writers: each replays its run of rows, so the dump reassembles chunks of 3 ranks.
  replay_and_dump(first, "files.round.replayed", second, "3");
  Finished same = check_script({"compare", first, second});
  EXPECT_EQ(same.status, 0) << same.err << same.out;
  Finished checked = check_script({"check", second, "--steps", "0,10,20", "--encoding", "groupBased"});
  EXPECT_EQ(checked.status, 0) << checked.err << checked.out;
}

TEST(StreamFiles, ReplaysASeriesWrittenByAnotherCode) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  const std::string foreign = dir / "foreign.h5", dumped = dir / "dumped.h5";
  Finished made = check_script({"make-foreign", foreign});
  ASSERT_EQ(made.status, 0) << made.err;
  Process replay(cli({"stream", "replay", "--address", server().tcp_address(), "--stream",
                      "files.foreign", "--input", foreign, "--writers", "2"}));
  Finished dump = run(cli(dump_args("files.foreign", dumped)));
  Finished replayed = replay.wait();
  ASSERT_EQ(dump.status, 0) << dump.err;
  // The soft link is reported and left out; everything else is published.
  EXPECT_EQ(replayed.status, 1) << replayed.err;
  EXPECT_NE(replayed.err.find("'link' is a soft or external link: left out"), std::string::npos)
      << replayed.err;
  EXPECT_NE(replayed.err.find("2 steps published"), std::string::npos) << replayed.err;
  Finished checked = check_script({"check-foreign", foreign, dumped});
  EXPECT_EQ(checked.status, 0) << checked.err << checked.out;
}

TEST(StreamFiles, HostileComponentNamesStayInsideTheFile) {
  SKIP_WITHOUT_H5PY();
  TempDir dir;
  fs::create_directory(dir.path() / "out");
  const std::string output = dir / "out/series.h5";
  const std::vector<std::string> hostile = {"../../etc/x", "/abs", "meshes/../../x", "meshes//x",
                                            "meshes/./x", "meshes/x/"};
  std::thread writer([&] {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    StreamWriter w(options(), "files.hostile", 0, 1, writer_options);
    const std::vector<std::uint64_t> extent = {4}, offset = {0};
    const std::vector<double> values = {1, 2, 3, 4};
    w.begin_step(0);
    for (const std::string& name : hostile) w.put_chunk<double>(name, extent, offset, extent, values);
    w.put_chunk<double>("meshes/ok", extent, offset, extent, values);
    w.set_attribute("../up", "unitSI", 1.0);
    w.end_step();
    w.close();
  });
  Finished dump = run(cli(dump_args("files.hostile", output)));
  writer.join();
  EXPECT_EQ(dump.status, 1) << dump.err;
  for (const std::string& name : hostile) {
    EXPECT_NE(dump.err.find("'" + name + "' is not a path inside an iteration"), std::string::npos)
        << name << "\n" << dump.err;
  }
  EXPECT_NE(dump.err.find("attribute 'unitSI' of '../up' left out"), std::string::npos) << dump.err;
  // Nothing but the output file was created, anywhere below the test's directory.
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    files.push_back(fs::relative(entry.path(), dir.path()).string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"out", "out/series.h5"}));
  Finished objects = check_script({"objects", output});
  ASSERT_EQ(objects.status, 0) << objects.err;
  EXPECT_EQ(objects.out, "data\ndata/0\ndata/0/meshes\ndata/0/meshes/ok\n"
                         "check_openpmd.py: objects ok\n");
}

// A minimal openPMD file whose iteration 0 holds what `fill` puts in its meshes group.
void write_openpmd_file(const std::string& path, const std::function<void(hid_t meshes)>& fill) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0) << path;
  const std::pair<const char*, const char*> root[] = {
      {"openPMD", "1.1.0"},        {"basePath", "/data/%T/"},
      {"meshesPath", "meshes/"},   {"particlesPath", "particles/"},
      {"iterationEncoding", "groupBased"}, {"iterationFormat", "/data/%T/"}};
  for (const auto& [name, value] : root) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, std::strlen(value));
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(H5Awrite(attribute, type, value), 0) << name;
    H5Aclose(attribute);
    H5Sclose(space);
    H5Tclose(type);
  }
  const hid_t parents = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(parents, 1);
  const hid_t meshes = H5Gcreate2(file, "/data/0/meshes", parents, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(meshes, 0);
  fill(meshes);
  H5Gclose(meshes);
  H5Pclose(parents);
  H5Fclose(file);
}

// A one-dimensional uint8 dataset `name` of `size` elements with the creation properties `create`.
void create_bytes_dataset(hid_t group, const char* name, hsize_t size, hid_t create) {
  const hid_t space = H5Screate_simple(1, &size, nullptr);
  const hid_t dataset =
      H5Dcreate2(group, name, H5T_NATIVE_UINT8, space, H5P_DEFAULT, create, H5P_DEFAULT);
  EXPECT_GE(dataset, 0) << name;
  H5Dclose(dataset);
  H5Sclose(space);
}

const std::string kSecret = "-----BEGIN PRIVATE KEY----- not for the stream -----END-----";

Finished replay_file(const std::string& input, const std::string& stream) {
  return run(cli({"stream", "replay", "--address", server().tcp_address(), "--stream", stream,
                  "--input", input}));
}

// Nothing of a refused series reaches the server: its stream was never made, so no reader can
// see a byte of it.
void expect_no_stream(const std::string& stream) {
  Finished info = run(cli({"stream", "info", "--address", server().tcp_address(), stream}));
  EXPECT_EQ(info.status, 1) << info.out;
  EXPECT_NE(info.err.find("no stream named '" + stream + "'"), std::string::npos) << info.err;
  EXPECT_EQ(info.out.find("not for the stream"), std::string::npos) << info.out;
}

TEST(StreamFiles, ReplayRefusesExternalRawStorage) {
  TempDir dir;
  const std::string secret = dir / "id_key", input = dir / "external.h5";
  std::ofstream(secret) << kSecret;
  write_openpmd_file(input, [&](hid_t meshes) {
    const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    EXPECT_GE(H5Pset_external(create, secret.c_str(), 0, kSecret.size()), 0);
    H5Pset_fill_time(create, H5D_FILL_TIME_NEVER);  // the secret file stays as it is
    create_bytes_dataset(meshes, "key", kSecret.size(), create);
    H5Pclose(create);
  });
  Finished replayed = replay_file(input, "files.external");
  EXPECT_EQ(replayed.status, 1) << replayed.err;
  EXPECT_NE(replayed.err.find("dataset '/data/0/meshes/key' in '" + input +
                              "' keeps its elements in external files (external raw storage): "
                              "refused"),
            std::string::npos)
      << replayed.err;
  expect_no_stream("files.external");
  EXPECT_EQ(read_file(secret), kSecret);
}

TEST(StreamFiles, ReplayRefusesVirtualDatasets) {
  TempDir dir;
  const std::string source = dir / "private.h5", input = dir / "virtual.h5";
  const hsize_t size = kSecret.size();
  {
    const hid_t file = H5Fcreate(source.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t space = H5Screate_simple(1, &size, nullptr);
    const hid_t dataset = H5Dcreate2(file, "secret", H5T_NATIVE_UINT8, space, H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, kSecret.data()),
              0);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Fclose(file);
  }
  write_openpmd_file(input, [&](hid_t meshes) {
    const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    const hid_t space = H5Screate_simple(1, &size, nullptr);
    EXPECT_GE(H5Pset_virtual(create, space, source.c_str(), "/secret", space), 0);
    create_bytes_dataset(meshes, "key", size, create);
    H5Sclose(space);
    H5Pclose(create);
  });
  Finished replayed = replay_file(input, "files.virtual");
  EXPECT_EQ(replayed.status, 1) << replayed.err;
  EXPECT_NE(replayed.err.find("dataset '/data/0/meshes/key' in '" + input +
                              "' is a virtual dataset"),
            std::string::npos)
      << replayed.err;
  EXPECT_NE(replayed.err.find("refused, nothing of the series is published"), std::string::npos)
      << replayed.err;
  expect_no_stream("files.virtual");
}

TEST(StreamFiles, ReplayRefusesDatasetsDeclaringFarMoreThanTheFileHolds) {
  TempDir dir;
  const std::string input = dir / "huge.h5";
  constexpr hsize_t kDeclared = hsize_t{1} << 31;  // 2 GiB of fill values, no chunk stored
  write_openpmd_file(input, [&](hid_t meshes) {
    const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk = 1024;
    H5Pset_chunk(create, 1, &chunk);
    create_bytes_dataset(meshes, "E", kDeclared, create);
    H5Pclose(create);
  });
  ASSERT_LT(fs::file_size(input), 64u * 1024);
  Finished replayed = replay_file(input, "files.huge");
  EXPECT_EQ(replayed.status, 1) << replayed.err;
  EXPECT_NE(replayed.err.find("dataset '/data/0/meshes/E' in '" + input + "' declares " +
                              std::to_string(kDeclared) + " bytes (" +
                              std::to_string(kDeclared) + " elements of 1 bytes) but stores 0 "
                                                          "bytes in the file"),
            std::string::npos)
      << replayed.err;
  // Against the same program's own peak for nothing at all (its libraries alone are hundreds of
  // MiB under the sanitizers): holding the 2 GiB declared would add at least that much.
  const Finished baseline = run(cli({"stream", "replay", "--help"}));
  EXPECT_LT(replayed.max_rss_kib - baseline.max_rss_kib, 256L * 1024)
      << "replay held the declared size (peak " << replayed.max_rss_kib << " KiB, "
      << baseline.max_rss_kib << " KiB for --help)";
  expect_no_stream("files.huge");

  // An explicit limit replaces the comparison with the file, and holds on its own.
  Finished limited = run(cli({"stream", "replay", "--address", server().tcp_address(),
                              "--stream", "files.huge", "--input", input, "--max-bytes",
                              "1mb"}));
  EXPECT_EQ(limited.status, 1) << limited.err;
  EXPECT_NE(limited.err.find("iteration 0 would hold more than the limit of 1048576 bytes"),
            std::string::npos)
      << limited.err;
  expect_no_stream("files.huge");
}

TEST(StreamFiles, DumpRefusesAChunkFarOutInAHugeExtent) {
  TempDir dir;
  const std::string output = dir / "far.h5";
  constexpr std::uint64_t kExtent = std::uint64_t{1} << 37;  // doubles: 1 TiB
  std::thread writer([&] {
    StreamWriterOptions writer_options;
    writer_options.expected_groups = 1;
    StreamWriter w(options(), "files.far", 0, 1, writer_options);
    const std::vector<std::uint64_t> extent = {4}, offset = {0}, one = {1};
    const std::vector<std::uint64_t> huge = {kExtent}, last = {kExtent - 1};
    const std::vector<double> values = {1, 2, 3, 4}, far = {42};
    w.begin_step(0);
    w.put_chunk<double>("meshes/far", huge, last, one, far);
    w.put_chunk<double>("meshes/ok", extent, offset, extent, values);
    w.end_step();
    w.close();
  });
  Finished dump = run(cli(dump_args("files.far", output)));
  writer.join();
  EXPECT_EQ(dump.status, 1) << dump.err;
  EXPECT_NE(dump.err.find("step 0: component refused: 'meshes/far' would be a dataset of " +
                          std::to_string(kExtent * 8) + " bytes (extent " +
                          std::to_string(kExtent) + ") but its chunks carry 8 bytes"),
            std::string::npos)
      << dump.err;
  EXPECT_NE(dump.err.find("(1 components, 32 B)"), std::string::npos) << dump.err;
  EXPECT_LT(fs::file_size(output), 1u << 20);
  struct stat written {};
  ASSERT_EQ(::stat(output.c_str(), &written), 0);
  EXPECT_LT(written.st_blocks * 512, 1 << 20);  // nor a sparse file of a terabyte
}

TEST(StreamFiles, DumpRefusesAnOutputThatDisagreesWithTheEncoding) {
  TempDir dir;
  Finished no_pattern = run(cli({"stream", "dump", "--address", server().tcp_address(), "--stream",
                            "files.none", "--output", dir / "out.h5", "--encoding", "fileBased"}));
  EXPECT_EQ(no_pattern.status, 1);
  EXPECT_NE(no_pattern.err.find("needs an iteration placeholder"), std::string::npos)
      << no_pattern.err;
  Finished pattern = run(cli({"stream", "dump", "--address", server().tcp_address(), "--stream",
                         "files.none", "--output", dir / "out_%T.h5", "--encoding",
                         "groupBased"}));
  EXPECT_EQ(pattern.status, 1);
  EXPECT_NE(pattern.err.find("groupBased output is one file"), std::string::npos) << pattern.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(StreamFiles, InfoShowsTheQueueAndItsGroups) {
  StreamWriterOptions writer_options;
  writer_options.expected_groups = 1;
  StreamWriter writer(options(), "files.info", 0, 1, writer_options);
  const std::vector<std::uint64_t> extent = {4}, offset = {0};
  const std::vector<double> values = {1, 2, 3, 4};
  for (std::int64_t step = 0; step < 2; ++step) {
    writer.begin_step(step);
    writer.put_chunk<double>("meshes/T", extent, offset, extent, values);
    writer.end_step();
  }
  StreamReaderOptions reader_options;
  reader_options.strategy = "roundrobin";
  StreamReader reader(options(), "files.info", "viewers", 0, 1, reader_options);
  StreamNext next = reader.next_step();  // held while info looks
  ASSERT_EQ(next.kind, StreamNext::Kind::kStep);

  Finished info = run(cli({"stream", "info", "--address", server().tcp_address(), "files.info"}));
  ASSERT_EQ(info.status, 0) << info.err;
  for (const char* line : {"stream 'files.info'", "writers                  1",
                           "steps held               2", "bytes held               64",
                           "newest complete step     1", "ended                    no",
                           "groups                   1",
                           "group 'viewers': policy block, strategy roundrobin, 1 of 1 readers",
                           "steps delivered          1"}) {
    EXPECT_NE(info.out.find(line), std::string::npos) << line << "\n" << info.out;
  }
  Finished missing = run(cli({"stream", "info", "--address", server().tcp_address(), "files.nothing"}));
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no stream named 'files.nothing'"), std::string::npos) << missing.err;
  // Said once (it was printed twice: a log line and a plain line).
  const std::string said = "no stream named 'files.nothing'";
  EXPECT_EQ(missing.err.find(said), missing.err.rfind(said)) << missing.err;

  // `stream delete`: the stream goes with what it holds; the reader's next request is refused.
  Finished erased = run(cli({"stream", "delete", "--address", server().tcp_address(),
                             "files.info", "files.nothing"}));
  ASSERT_EQ(erased.status, 0) << erased.err;
  EXPECT_NE(erased.out.find("stream 'files.info': deleted"), std::string::npos) << erased.out;
  EXPECT_NE(erased.out.find("stream 'files.nothing': no such stream"), std::string::npos)
      << erased.out;
  Finished after = run(cli({"stream", "info", "--address", server().tcp_address(), "files.info"}));
  EXPECT_EQ(after.status, 1) << after.out;
  EXPECT_THROW(reader.next_step(), ServerError);
}

}  // namespace
}  // namespace slipstream::testing
