// `slipstream stream dump` and `slipstream stream replay`: a stream to and from openPMD HDF5
// files. Built only with HDF5 (stream_files.cpp); without it the commands say so.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace slipstream::cli {

struct DumpSettings {
  std::string address;   ///< empty: the client's default (SLIPSTREAM_ADDRESS, SSDB)
  std::string stream;
  std::string output;    ///< a file, or a pattern with %T for fileBased
  std::string encoding;  ///< "groupBased", "fileBased", or empty: fileBased when output has %T
  std::string group = "dump";
  std::chrono::milliseconds timeout{0};  ///< longest wait for a step; zero: no limit
  /// The largest dataset (global extent x element size) written; zero: kMaxSparseness times
  /// the bytes the component's chunks carry in the step, plus kSparseAllowance.
  std::uint64_t max_dataset_bytes = 0;
};

/// The default bound of dump's datasets: a component's chunks may leave most of its extent
/// unwritten, but not so much that a few bytes make a file of terabytes.
inline constexpr std::uint64_t kMaxSparseness = 64;
inline constexpr std::uint64_t kSparseAllowance = std::uint64_t{1} << 20;

struct ReplaySettings {
  std::string address;
  std::string stream;
  std::string input;  ///< a file, or a pattern with %T for fileBased
  std::uint32_t writers = 1;
  std::size_t queue_limit = 2;
  std::uint32_t expected_groups = 1;
  /// The most bytes one iteration's datasets may hold; zero: judged from the file's size (see
  /// openpmd::SeriesReader).
  std::uint64_t max_bytes = 0;
};

/// True when this build can read and write HDF5 files.
bool have_hdf5() noexcept;

/// Joins `group` as its only reader and writes every step until the end of the stream; progress
/// and problems on stderr. Returns 0 when everything was written, 1 when something was left out
/// (refused names, datasets over max_dataset_bytes, skipped steps are not counted) or the
/// timeout expired.
int run_dump(const DumpSettings& settings);

/// Publishes every iteration of the series as a stream step from `writers` writer ranks.
/// Returns 0 when everything was published, 1 when something was left out or the series was
/// refused before anything was published (a dataset stored in other files, or declaring more
/// than the file or max_bytes allows).
int run_replay(const ReplaySettings& settings);

}  // namespace slipstream::cli
