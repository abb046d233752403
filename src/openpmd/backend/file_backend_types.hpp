// The HDF5 side of openPMD's Datatypes for the file backend (file_backend.cpp): element types of
// datasets, and attributes written and read with their exact type, as openPMD-api and h5py do.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>
#include <vector>

#include "openPMD/Attribute.hpp"
#include "openpmd/format/hdf5_util.hpp"

namespace openPMD::internal {

using slipstream::openpmd::Handle;

/// The HDF5 type of one element of `dtype` (in memory and in files): the native integer and
/// floating-point types (LONG_DOUBLE: H5T_NATIVE_LDOUBLE), complex numbers as the compound
/// {r, i} and booleans as the int8 enum FALSE = 0 / TRUE = 1 (both h5py's conventions). Throws
/// FileError for strings, vectors and UNDEFINED.
Handle element_type(Datatype dtype);

/// The Datatype of elements of HDF5 type `type`, or nullopt when openPMD has none: integers by
/// size and sign (1-byte signed is CHAR, 8-byte signed LONG, as openPMD-api reads them),
/// floating point of 4, 8 and sizeof(long double) bytes, the boolean enum and the {r, i}
/// compounds.
std::optional<Datatype> datatype_of(hid_t type);

/// True when elements of `a` are elements of `b`: same class, size and signedness (LONG and
/// LONGLONG are one type on LP64; CHAR is SCHAR or UCHAR as the platform's char is).
bool same_element(Datatype a, Datatype b);

/// Writes (replacing) attribute `name` of `object` with the exact type `value` holds: scalars in
/// a scalar dataspace, vectors and array<double, 7> as one-dimensional arrays, strings as
/// fixed-length ASCII (vectors of them padded to the longest), booleans and complex numbers as
/// element_type() says.
void write_typed_attribute(hid_t object, const std::string& name, const Attribute& value);

struct TypedAttribute {
  std::string name;
  Attribute value;
};

/// The attributes of `object` in name order, each as the Attribute alternative of its file type
/// (a uint64 scalar is `unsigned long`, a float32 array `std::vector<float>`, seven doubles named
/// unitDimension `std::array<double, 7>`, fixed- or variable-length strings std::string or
/// std::vector<std::string>). Attributes of other types or ranks, and those declaring more than
/// 1 MiB, are left out unread and described in `skipped`.
std::vector<TypedAttribute> read_typed_attributes(hid_t object, std::vector<std::string>& skipped);

}  // namespace openPMD::internal
