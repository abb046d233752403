// The small part of the HDF5 C API that the openPMD reader and writer share: handles that close
// themselves, errors as exceptions carrying HDF5's own explanation, attributes as the stream's
// AttributeValue, and the mapping between DType and HDF5 types.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slipstream/stream.hpp"
#include "slipstream/tensor.hpp"

namespace slipstream::openpmd {

/// An HDF5 call failed, or a file does not follow the openPMD layout. what() names the object and
/// gives HDF5's reason.
class FileError : public std::runtime_error {
 public:
  explicit FileError(const std::string& message) : std::runtime_error(message) {}
};

/// Stops HDF5 from printing its error stack on stderr: failures become FileError messages
/// instead. Call once before any other HDF5 call.
void silence_hdf5_errors();

/// Throws FileError("<what>: <HDF5's innermost reason>") when `status` is negative; returns it.
hid_t check(hid_t status, std::string_view what);

/// An HDF5 identifier (file, group, dataset, dataspace, datatype, attribute, property list) that
/// closes itself with the matching H5?close.
class Handle {
 public:
  Handle() = default;
  /// Takes `id`, which check() has already accepted.
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const noexcept { return id_; }
  operator hid_t() const noexcept { return id_; }  // NOLINT: handles pass straight to H5 calls
  /// Closes the object (errors go unreported: use close_file() where they matter).
  void reset() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// check(status, what) wrapped in a Handle.
inline Handle checked(hid_t id, std::string_view what) { return Handle(check(id, what)); }

/// The object at `segments` below `base` (already validated: see split_object_path), or an
/// invalid handle when one of its links is missing. Only hard links are followed, so a file
/// cannot send the reader to another file.
Handle open_if_exists(hid_t base, const std::vector<std::string>& segments);

/// The group at `segments` below `base`, created with its missing parents.
Handle open_or_create_group(hid_t base, const std::vector<std::string>& segments);

/// The types an openPMD attribute may need beyond what AttributeValue says (it has one integer
/// and one floating-point type).
enum class StoredType { kAsGiven, kFloat64, kFloat32, kUInt32, kUInt64 };

/// Writes (replacing) attribute `name` of `object`: strings as fixed-length ASCII, vectors as
/// one-dimensional arrays (even of one element), scalars as scalars. A number stored as another
/// type is converted; a string given for a numeric type is written as given.
void write_attribute(hid_t object, const std::string& name, const AttributeValue& value,
                     StoredType type = StoredType::kAsGiven);

struct NamedAttribute {
  std::string name;
  AttributeValue value;
};

/// The attributes of `object` in name order: integers (and enums such as booleans) as
/// std::int64_t, floating point as double, fixed- or variable-length strings as std::string,
/// scalars as scalars and one-dimensional arrays as vectors. Attributes of other types, and
/// those that declare more than 1 MiB (elements x max(element size, 8 bytes)), are left out
/// unread and described in `skipped`.
std::vector<NamedAttribute> read_attributes(hid_t object, std::vector<std::string>& skipped);

/// Creates attribute `name` of `object` (which must not have it) with `count` elements of `type`
/// at `data`: a one-dimensional array when `is_array`, else a scalar.
void write_raw(hid_t object, const std::string& name, hid_t type, bool is_array,
               std::size_t count, const void* data);

/// A fixed-length (NUL- or space-padded) and a variable-length string attribute of `count`
/// strings, read as they are stored.
std::vector<std::string> read_fixed_strings(hid_t attribute, hid_t file_type, std::size_t count);
std::vector<std::string> read_variable_strings(hid_t attribute, hid_t file_type,
                                               std::size_t count);

/// How deep below an iteration a reader follows groups: meshes/E/x is 3, particle patches 5.
inline constexpr int kMaxDepth = 16;

/// A link of a group, and whether it is a hard link (the only kind the readers follow: a soft or
/// external link could lead to other files).
struct Link {
  std::string name;
  bool hard = false;
};
/// The links of `group`, in name order.
std::vector<Link> links_of(hid_t group);

/// True when `object` has an attribute `name`.
bool has_attribute(hid_t object, const std::string& name);

/// The in-memory HDF5 type of a DType (booleans: the int8 enum FALSE/TRUE that h5py reads as
/// bool). The caller owns the result.
Handle memory_type(DType dtype);

/// The DType whose elements a dataset of `file_type` is read as, or throws FileError for types
/// a stream cannot carry (compounds, strings, integers wider than 64 bits, ...).
DType dtype_for(hid_t file_type);

}  // namespace slipstream::openpmd
