// A compression operator, as openPMD-api users name them for ADIOS2: for stream components
// (StreamWriterOptions::operators, docs/streams.md "Operators") and for tensors (Client::put_tensor,
// TensorRef::compression, docs/client.md "Compressed tensors").
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace slipstream {

/// "zstd" (`level` 1-19), "blosc" (`clevel` 0-9, `doshuffle` BLOSC_SHUFFLE / BLOSC_NOSHUFFLE /
/// BLOSC_BITSHUFFLE, `compressor` blosclz, lz4, lz4hc, snappy, zlib or zstd), "bzip2"
/// (`blockSize100k` 1-9) and, for float32 and float64 arrays of 1-4 dimensions, "zfp" with one of
/// `accuracy` (the largest absolute error), `precision` (bits kept) or `rate` (bits per value).
/// Operators need the shared library (libslipstream.so): the static one has no codecs.
struct CompressionOperator {
  std::string type;
  std::vector<std::pair<std::string, std::string>> parameters;
};

}  // namespace slipstream
