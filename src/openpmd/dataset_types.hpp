// The C++ type of every Datatype a dataset may have, for code that must handle each by type
// (loads of constants, loadChunkVariant).
#pragma once

#include <complex>
#include <string>

#include "openPMD/Datatype.hpp"
#include "openPMD/Error.hpp"

namespace openPMD::internal {

/// Calls `f(static_cast<T*>(nullptr))` with T the C++ type of `dtype`, and returns what it
/// returns. Throws error::WrongAPIUsage naming `what` for a type no dataset has (strings,
/// vectors, UNDEFINED).
template <typename F>
decltype(auto) with_dataset_type(Datatype dtype, const std::string& what, F&& f) {
  switch (dtype) {
    case Datatype::CHAR: return f(static_cast<char*>(nullptr));
    case Datatype::UCHAR: return f(static_cast<unsigned char*>(nullptr));
    case Datatype::SCHAR: return f(static_cast<signed char*>(nullptr));
    case Datatype::SHORT: return f(static_cast<short*>(nullptr));
    case Datatype::INT: return f(static_cast<int*>(nullptr));
    case Datatype::LONG: return f(static_cast<long*>(nullptr));
    case Datatype::LONGLONG: return f(static_cast<long long*>(nullptr));
    case Datatype::USHORT: return f(static_cast<unsigned short*>(nullptr));
    case Datatype::UINT: return f(static_cast<unsigned int*>(nullptr));
    case Datatype::ULONG: return f(static_cast<unsigned long*>(nullptr));
    case Datatype::ULONGLONG: return f(static_cast<unsigned long long*>(nullptr));
    case Datatype::FLOAT: return f(static_cast<float*>(nullptr));
    case Datatype::DOUBLE: return f(static_cast<double*>(nullptr));
    case Datatype::LONG_DOUBLE: return f(static_cast<long double*>(nullptr));
    case Datatype::CFLOAT: return f(static_cast<std::complex<float>*>(nullptr));
    case Datatype::CDOUBLE: return f(static_cast<std::complex<double>*>(nullptr));
    case Datatype::CLONG_DOUBLE: return f(static_cast<std::complex<long double>*>(nullptr));
    case Datatype::BOOL: return f(static_cast<bool*>(nullptr));
    default:
      throw error::WrongAPIUsage(what + ": " + datatypeToString(dtype) +
                                 " is not the type of a dataset");
  }
}

}  // namespace openPMD::internal
