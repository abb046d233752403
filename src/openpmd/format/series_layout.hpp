// Where an openPMD series lives and how its objects are named, without touching HDF5: the file
// name pattern of file-based series (%T, %06T) and the check that turns untrusted record
// component names from the network into HDF5 object paths inside one iteration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slipstream::openpmd {

/// openPMD's iterationEncoding.
enum class Encoding { kGroupBased, kFileBased };

/// "groupBased" / "fileBased".
std::string_view encoding_name(Encoding encoding) noexcept;

/// A file name with one iteration placeholder, `%T` (the number as is) or `%0<N>T` (zero-padded
/// to N digits), as openPMD's iterationFormat for file-based series.
class FilePattern {
 public:
  /// Parses `path`. Returns nullopt when it has no placeholder; throws std::invalid_argument when
  /// it has more than one, a malformed one, or one in a directory part (the iterations of a
  /// series live side by side in one directory).
  static std::optional<FilePattern> parse(const std::string& path);

  /// The file of `iteration` (>= 0).
  std::string expand(std::int64_t iteration) const;
  /// The iteration a file name (no directory) stands for, or nullopt when it does not match.
  std::optional<std::int64_t> match(std::string_view file_name) const;
  /// The directory that holds the files ("." when the pattern has none).
  std::string directory() const;
  /// The pattern as given (e.g. "out_%T.h5"), written to the iterationFormat attribute.
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
  std::string before_;  ///< up to the placeholder (directory included)
  std::string after_;
  std::size_t width_ = 0;  ///< digits to pad to; 0: no padding
};

/// Splits an untrusted object path (a component name such as `meshes/E/x`, or the path of an
/// attribute) into its segments. Throws std::invalid_argument, saying why, unless the path is
/// relative, non-empty, printable ASCII without spaces, and has no empty, "." or ".." segment:
/// such a path can only name an object below the group it is resolved from.
std::vector<std::string> split_object_path(std::string_view path);

/// Throws std::invalid_argument unless `name` can be an attribute name: non-empty, printable
/// ASCII, no '/'.
void check_attribute_name(std::string_view name);

}  // namespace slipstream::openpmd
