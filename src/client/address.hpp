// Server addresses: parsing `tcp://host:port`, `unix:///path` and `host:port`, and choosing one
// from the environment (SLIPSTREAM_ADDRESS, then SSDB).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace slipstream::client {

struct Address {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  ///< TCP host name or IP literal (IPv6 without brackets)
  std::uint16_t port = 0;
  std::string path;  ///< Unix socket path

  /// `tcp://host:port` or `unix:///path`.
  std::string to_string() const;
};

/// Parses one address. Throws InvalidArgumentError naming the address and the accepted forms.
Address parse_address(std::string_view text);

/// The address to use when none is given: SLIPSTREAM_ADDRESS if set and not empty, else the first
/// entry of SSDB. Throws InvalidArgumentError if neither is set.
std::string address_from_environment();

}  // namespace slipstream::client
