// The options of a Series as openPMD-api users write them: JSON or TOML, inline or `@file`,
// read into what this layer uses (backend choice, the `slipstream` section, SST parameters
// mapped to stream options) with the keys it ignores or does not know reported once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace openPMD::internal {

/// A compression operator as ADIOS2 and openPMD-api name it (`adios2.dataset.operators`):
/// its type ("zstd", "blosc", "bzip2", "zfp", ...) and parameters as text.
struct DatasetOperator {
  std::string type;
  std::vector<std::pair<std::string, std::string>> parameters;
};

/// A reduction at the source (`slipstream.reductions`, slipstream::StreamReduction): a TorchScript
/// or ONNX file the writer ranks run on their chunks of `inputs`, the stream carrying `output`.
struct ReductionConfig {
  std::string function;
  std::vector<std::string> inputs;
  std::string output;
  bool send_inputs = false;
};

struct SeriesConfig {
  /// `backend` (lower case): "slipstream", "hdf5", "adios2", "json", ... or empty.
  std::string backend;
  /// `iteration_encoding`: "group_based", "file_based", "variable_based" or empty.
  std::string iteration_encoding;

  // The `slipstream` section.
  std::string address;  ///< empty: SLIPSTREAM_ADDRESS, then SSDB
  std::string group;    ///< the reader group; empty: "openpmd"
  std::string strategy; ///< chunk distribution (ours or openPMD-api's names); empty: the default
  /// Step distribution across the readers of a group: "all" (every reader a share of every
  /// step, the default), "round_robin" or "on_demand" (each step whole to one reader: in turn,
  /// or to whichever asks first). SST's StepDistributionMode sets it too.
  std::string step_distribution;
  /// What a reader does with a step its writers aborted (one of them failed mid-step): "skip"
  /// (the default: say so on stderr and go on with the next) or "throw" (error::ReadError).
  std::string on_aborted_step = "skip";
  /// Reductions at the source run by a stream's writers (the stream backend only).
  std::vector<ReductionConfig> reductions;

  // SST parameters (adios2.engine.parameters) that mean something here.
  std::optional<std::size_t> queue_limit;         ///< QueueLimit
  std::optional<bool> discard;                    ///< QueueFullPolicy: Discard / Block
  std::optional<std::uint32_t> expected_groups;   ///< RendezvousReaderCount
  std::optional<std::chrono::milliseconds> open_timeout;  ///< OpenTimeoutSecs
  std::optional<bool> first_step_precious;        ///< FirstTimestepPrecious

  /// adios2.dataset.operators: the operator of every dataset without one of its own (Dataset
  /// options). Applied by the stream backend; HDF5 files are written without it (said once).
  std::optional<DatasetOperator> dataset_operator;

  /// Things said once when the series opens (ignored parameters, unknown keys).
  std::vector<std::string> warnings;
};

/// Parses `options` (JSON or TOML text, or `@path` naming a file of either). Throws
/// error::BackendConfigSchema naming where the problem is.
SeriesConfig parse_config(const std::string& options);

/// The operator a Dataset's `options` (JSON or TOML, as openPMD-api takes them) ask for with
/// `adios2.dataset.operators`, or nullopt. Throws error::BackendConfigSchema for options that do
/// not parse, an operator list that is not a list of {type, parameters}, or more than one
/// operator (chains are not supported).
std::optional<DatasetOperator> dataset_operator(const std::string& options);

}  // namespace openPMD::internal
