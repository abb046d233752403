// openPMD-api's Attribute: a value of any openPMD attribute type that keeps its exact type
// (dtype) and converts on get<T>() the way openPMD-api does.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "openPMD/Datatype.hpp"

namespace openPMD {

/// One attribute value. The variant's alternatives are in Datatype's order, so `dtype` is the
/// index of the alternative held.
class Attribute {
 public:
  using resource = std::variant<
      char, unsigned char, signed char, short, int, long, long long, unsigned short, unsigned int,
      unsigned long, unsigned long long, float, double, long double, std::complex<float>,
      std::complex<double>, std::complex<long double>, std::string, std::vector<char>,
      std::vector<short>, std::vector<int>, std::vector<long>, std::vector<long long>,
      std::vector<unsigned char>, std::vector<unsigned short>, std::vector<unsigned int>,
      std::vector<unsigned long>, std::vector<unsigned long long>, std::vector<float>,
      std::vector<double>, std::vector<long double>, std::vector<std::complex<float>>,
      std::vector<std::complex<double>>, std::vector<std::complex<long double>>,
      std::vector<signed char>, std::vector<std::string>, std::array<double, 7>, bool>;

  Attribute() : Attribute(resource{}) {}
  Attribute(resource value)  // NOLINT: implicit, as openPMD-api's
      : dtype(static_cast<Datatype>(value.index())), value_(std::move(value)) {}
  template <typename T,
            typename = std::enable_if_t<std::is_constructible_v<resource, T> &&
                                        !std::is_same_v<std::decay_t<T>, resource> &&
                                        !std::is_same_v<std::decay_t<T>, Attribute>>>
  Attribute(T&& value)  // NOLINT: implicit, as openPMD-api's
      : Attribute(resource(std::forward<T>(value))) {}

  /// The exact type the value has.
  Datatype dtype;

  /// The value as U, converted as openPMD-api converts: between every numeric type (bool
  /// included), element-wise between vectors, a scalar to a vector of one, a vector of one to a
  /// scalar, array<double, 7> to and from vector<double>, real to complex, a string to and from
  /// a vector of one string. Throws std::runtime_error when no conversion exists.
  template <typename U>
  U get() const {
    std::optional<U> value = getOptional<U>();
    if (!value) {
      throw std::runtime_error("getCast: no cast possible from " + datatypeToString(dtype) +
                               " to " + datatypeToString(determineDatatype<U>()) + ".");
    }
    return std::move(*value);
  }
  /// As get(), with nullopt when no conversion exists.
  template <typename U>
  std::optional<U> getOptional() const {
    return std::visit([](const auto& held) -> std::optional<U> { return convert<U>(held); },
                      value_);
  }
  /// The variant itself.
  const resource& getResource() const noexcept { return value_; }

 private:
  template <typename T>
  struct IsVector : std::false_type {};
  template <typename T>
  struct IsVector<std::vector<T>> : std::true_type {};
  template <typename T>
  struct IsComplex : std::false_type {};
  template <typename T>
  struct IsComplex<std::complex<T>> : std::true_type {};

  template <typename To, typename From>
  static std::optional<To> convert_scalar(const From& from) {
    if constexpr (std::is_same_v<To, From>) {
      return from;
    } else if constexpr (std::is_arithmetic_v<To> && std::is_arithmetic_v<From>) {
      return static_cast<To>(from);
    } else if constexpr (IsComplex<To>::value && std::is_arithmetic_v<From>) {
      return To(static_cast<typename To::value_type>(from));
    } else if constexpr (IsComplex<To>::value && IsComplex<From>::value) {
      return To(static_cast<typename To::value_type>(from.real()),
                static_cast<typename To::value_type>(from.imag()));
    } else {
      return std::nullopt;
    }
  }

  template <typename To, typename From>
  static std::optional<To> convert(const From& from) {
    if constexpr (std::is_same_v<To, From>) {
      return from;
    } else if constexpr (IsVector<To>::value && IsVector<From>::value) {
      To out;
      out.reserve(from.size());
      for (const auto& element : from) {
        auto converted = convert_scalar<typename To::value_type>(element);
        if (!converted) return std::nullopt;
        out.push_back(std::move(*converted));
      }
      return out;
    } else if constexpr (IsVector<To>::value && std::is_same_v<From, std::array<double, 7>>) {
      return convert<To>(std::vector<double>(from.begin(), from.end()));
    } else if constexpr (std::is_same_v<To, std::array<double, 7>>) {
      if constexpr (IsVector<From>::value) {
        auto doubles = convert<std::vector<double>>(from);
        if (!doubles || doubles->size() != 7) return std::nullopt;
        To out{};
        for (std::size_t i = 0; i < 7; ++i) out[i] = (*doubles)[i];
        return out;
      } else {
        return std::nullopt;
      }
    } else if constexpr (IsVector<To>::value) {
      auto element = convert_scalar<typename To::value_type>(from);
      if (!element) return std::nullopt;
      return To{std::move(*element)};
    } else if constexpr (IsVector<From>::value) {
      if (from.size() != 1) return std::nullopt;
      return convert_scalar<To>(from.front());
    } else {
      return convert_scalar<To>(from);
    }
  }

  resource value_;
};

}  // namespace openPMD
