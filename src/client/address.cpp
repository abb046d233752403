// Parsing of server addresses and the environment fallbacks (see address.hpp).
#include "client/address.hpp"

#include <charconv>
#include <cstdlib>

#include "slipstream/error.hpp"

namespace slipstream::client {
namespace {

constexpr std::string_view kForms = "expected tcp://host:port, unix:///path/to/socket or host:port";

[[noreturn]] void bad_address(std::string_view text, std::string_view why) {
  throw InvalidArgumentError("invalid server address '" + std::string(text) +
                             "': " + std::string(why) + " (" + std::string(kForms) + ")");
}

std::string trim(std::string_view s) {
  const auto* space = " \t\r\n";
  auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(space);
  return std::string(s.substr(first, last - first + 1));
}

}  // namespace

std::string Address::to_string() const {
  if (kind == Kind::kUnix) return "unix://" + path;
  bool ipv6 = host.find(':') != std::string::npos;
  return "tcp://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Address parse_address(std::string_view text) {
  Address address;
  std::string_view rest = text;
  if (rest.starts_with("unix://")) {
    address.kind = Address::Kind::kUnix;
    address.path = std::string(rest.substr(7));
    if (address.path.empty()) bad_address(text, "empty socket path");
    return address;
  }
  if (rest.starts_with("tcp://")) {
    rest.remove_prefix(6);
  } else if (auto scheme = rest.find("://"); scheme != std::string_view::npos) {
    bad_address(text, "unknown scheme '" + std::string(rest.substr(0, scheme)) + "'");
  }
  std::string_view host;
  std::string_view port;
  if (rest.starts_with('[')) {  // [ipv6]:port
    auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      bad_address(text, "malformed [IPv6]:port");
    }
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) bad_address(text, "missing port");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) bad_address(text, "missing host");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    bad_address(text, "port must be a number from 1 to 65535");
  }
  address.host = std::string(host);
  address.port = static_cast<std::uint16_t>(value);
  return address;
}

std::string address_from_environment() {
  if (const char* explicit_address = std::getenv("SLIPSTREAM_ADDRESS")) {
    std::string value = trim(explicit_address);
    if (!value.empty()) return value;
  }
  if (const char* ssdb = std::getenv("SSDB")) {
    std::string_view list = ssdb;
    std::string first = trim(list.substr(0, list.find(',')));
    if (!first.empty()) return first;
  }
  throw InvalidArgumentError(
      "no server address: give the client one (host:port, tcp://host:port or unix:///path) or "
      "set SLIPSTREAM_ADDRESS or SSDB");
}

}  // namespace slipstream::client
