// `slipstream-train CONFIG` given a path that is not a model file it can trust: a FIFO, /dev/zero,
// a directory, garbage, a truncated archive, an archive whose pickle declares a 3.75 GiB string.
// Each must end the trainer within seconds, with exit status 1 (never a signal), a few hundred MiB
// at most, and an error naming the file. The trainer runs as a child process, watched for time and
// memory, so a trainer that hangs or fills memory fails the test instead of the machine.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "slipstream/training.hpp"
#include "test_models.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kTimeLimit = std::chrono::seconds(30);
constexpr long kMemoryLimitKib = 2L << 20;  // 2 GiB of resident memory

// How a trainer run ended.
struct Outcome {
  bool exited = false;       // exited by itself (status below)
  int exit_status = -1;
  int signal = 0;            // the signal that ended it, when it did not exit
  bool timed_out = false;    // killed by the watch: over kTimeLimit
  bool over_memory = false;  // killed by the watch: over kMemoryLimitKib resident
  std::string error_output;
  double seconds = 0;

  std::string describe() const {
    std::ostringstream out;
    out << "exited " << exited << " status " << exit_status << " signal " << signal
        << " timed out " << timed_out << " over memory " << over_memory << " after " << seconds
        << " s; stderr: " << error_output;
    return out.str();
  }
};

long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

class TrainerInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("slipstream_trainer_inputs_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_file(dir_ / "samples.pt",
               slipstream::ml::testing::module_from_source(
                   "Samples",
                   "def forward(self, records: Dict[str, List[Tensor]]) -> Tuple[Tensor, Tensor]:\n"
                   "  xy = torch.cat(records['samples/xy']).reshape(-1, 2)\n"
                   "  return xy[:, :1], xy[:, 1:]\n"));
    write_file(dir_ / "model.pt", slipstream::ml::testing::linear_model(0.5f, 0.25f));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A config whose model file is `model` and sample builder `samples` (the good ones by default).
  // No server runs: the trainer must fail while it loads its files, before it connects.
  fs::path config(const fs::path& model, const fs::path& samples = {}) {
    const fs::path path = dir_ / "train.toml";
    write_file(path, "[stream]\nname = \"inputs\"\n[model]\nfile = \"" +
                         model.string() + "\"\nsamples = \"" +
                         (samples.empty() ? dir_ / "samples.pt" : samples).string() + "\"\n");
    return path;
  }

  // Runs slipstream-train on `config` as a child process and watches it.
  Outcome run_trainer(const fs::path& config_path) {
    const fs::path errors = dir_ / "stderr.txt";
    const auto started = Clock::now();
    const int error_fd = ::open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t pid = ::fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
      ::dup2(error_fd, STDERR_FILENO);
      ::dup2(null_fd, STDIN_FILENO);
      ::execl(SLIPSTREAM_TRAIN_BINARY, SLIPSTREAM_TRAIN_BINARY, config_path.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(error_fd);
    ::close(null_fd);
    Outcome outcome;
    int status = 0;
    while (true) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (Clock::now() - started > kTimeLimit) {
        outcome.timed_out = true;
      } else if (resident_kib(pid) > kMemoryLimitKib) {
        outcome.over_memory = true;
      }
      if (outcome.timed_out || outcome.over_memory) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (WIFEXITED(status)) {
      outcome.exited = true;
      outcome.exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      outcome.signal = WTERMSIG(status);
    }
    outcome.error_output = read_text(errors);
    return outcome;
  }

  // The trainer ended by itself with status 1, and its error contains every one of `expected`.
  void expect_refused(const Outcome& outcome, std::initializer_list<std::string> expected) {
    ASSERT_FALSE(outcome.timed_out) << outcome.describe();
    ASSERT_FALSE(outcome.over_memory) << outcome.describe();
    ASSERT_TRUE(outcome.exited) << outcome.describe();
    EXPECT_EQ(outcome.exit_status, 1) << outcome.describe();
    for (const std::string& text : expected) {
      EXPECT_NE(outcome.error_output.find(text), std::string::npos)
          << "expected '" << text << "' in: " << outcome.error_output;
    }
  }

  fs::path dir_;
};

TEST_F(TrainerInputs, AFifoModelIsRefusedWithoutWaitingForAWriter) {
  const fs::path fifo = dir_ / "model.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_trainer(config(fifo)),
                 {"cannot read the model " + fifo.string(), "it is a FIFO, not a regular file"});
}

TEST_F(TrainerInputs, DevZeroAsTheModelIsRefusedBeforeItIsRead) {
  expect_refused(run_trainer(config("/dev/zero")),
                 {"cannot read the model /dev/zero", "it is a character device"});
}

TEST_F(TrainerInputs, ADirectoryAsTheModelIsRefused) {
  const fs::path directory = dir_ / "model_dir";
  fs::create_directories(directory);
  expect_refused(run_trainer(config(directory)),
                 {"cannot read the model " + directory.string(), "it is a directory"});
}

TEST_F(TrainerInputs, AFifoSampleBuilderIsRefusedWithoutWaitingForAWriter) {
  const fs::path fifo = dir_ / "samples.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_trainer(config(dir_ / "model.pt", fifo)),
                 {"cannot read the sample builder " + fifo.string(), "it is a FIFO"});
}

TEST_F(TrainerInputs, AFifoConfigIsRefusedWithoutWaitingForAWriter) {
  const fs::path fifo = dir_ / "train.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_trainer(fifo), {"cannot read the trainer config " + fifo.string()});
}

TEST_F(TrainerInputs, AGarbageModelIsAnErrorNamingTheFile) {
  const fs::path garbage = dir_ / "garbage.pt";
  // A zip's local header signature, then bytes that are no archive.
  write_file(garbage, std::string("PK\x03\x04", 4) + std::string(4096, '\xa5'));
  expect_refused(run_trainer(config(garbage)),
                 {"model " + garbage.string(), "the model cannot be loaded"});
}

TEST_F(TrainerInputs, ATruncatedModelArchiveIsAnErrorNamingTheFile) {
  const std::string good = read_text(dir_ / "model.pt");
  const fs::path truncated = dir_ / "truncated.pt";
  write_file(truncated, good.substr(0, good.size() / 2));
  expect_refused(run_trainer(config(truncated)),
                 {"model " + truncated.string(), "the model cannot be loaded"});
}

// The server's pickle check (pickle_check.hpp): libtorch alone would allocate and zero-fill the
// 3.75 GiB this data.pkl declares before it found out that the bytes are not there.
TEST_F(TrainerInputs, AModelWhosePickleDeclaresAHugeStringIsRefusedBeforeLibtorchReadsIt) {
  const fs::path crafted = dir_ / "crafted.pt";
  write_file(crafted, slipstream::ml::testing::with_record(
                          read_text(dir_ / "model.pt"), "data.pkl",
                          std::string("\x80\x02X\x00\x00\x00\xf0.", 8)));
  expect_refused(run_trainer(config(crafted)),
                 {"model " + crafted.string(), "invalid model archive: data.pkl"});
}

// The library's from_file reads a good regular file as before.
TEST_F(TrainerInputs, RegularFilesStillLoadThroughTheLibrary) {
  auto one = slipstream::train::single_process();
  EXPECT_NO_THROW(slipstream::train::SampleBuilder::from_file((dir_ / "samples.pt").string()));
  EXPECT_NO_THROW(
      slipstream::train::Model::from_file((dir_ / "model.pt").string(), {}, *one));
}

}  // namespace
