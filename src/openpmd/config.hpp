// The options of a Series as openPMD-api users write them: JSON or TOML, inline or `@file`,
// read into what this layer uses (backend choice, the `slipstream` section, SST parameters
// mapped to stream options) with the keys it ignores or does not know reported once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace openPMD::internal {

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

  // SST parameters (adios2.engine.parameters) that mean something here.
  std::optional<std::size_t> queue_limit;         ///< QueueLimit
  std::optional<bool> discard;                    ///< QueueFullPolicy: Discard / Block
  std::optional<std::uint32_t> expected_groups;   ///< RendezvousReaderCount
  std::optional<std::chrono::milliseconds> open_timeout;  ///< OpenTimeoutSecs
  std::optional<bool> first_step_precious;        ///< FirstTimestepPrecious

  /// Things said once when the series opens (ignored parameters, unknown keys).
  std::vector<std::string> warnings;
};

/// Parses `options` (JSON or TOML text, or `@path` naming a file of either). Throws
/// error::BackendConfigSchema naming where the problem is.
SeriesConfig parse_config(const std::string& options);

}  // namespace openPMD::internal
