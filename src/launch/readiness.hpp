// Readiness of a server: whether an address answers PING, and waiting until it does. Used by the
// launcher for the servers it starts, by `slipstream wait-ready` and by `slipstream server
// --daemonize`.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace slipstream::launch {

/// One attempt: `ready` when `address` (`host:port`, `tcp://host:port` or `unix:///path`) accepted
/// a connection (and AUTH, with a password) and answered PING with PONG; otherwise `reason` says
/// what went wrong (connection refused, NOAUTH, ...). Never throws for an unreachable server.
/// With `process_id`, the server must also be that process (`process_id` of INFO server), so
/// that another server already listening on the address is not taken for a new one.
struct PingResult {
  bool ready = false;
  std::string reason;
};
PingResult ping_server(const std::string& address, const std::optional<std::string>& password,
                       std::chrono::milliseconds timeout,
                       std::optional<long> process_id = std::nullopt);

/// The addresses of a comma-separated list (as SSDB holds them), blanks around entries removed.
/// Throws std::invalid_argument when the list has no address.
std::vector<std::string> split_addresses(const std::string& list);

/// Pings every address in `addresses` until each has answered once, or `timeout` has passed
/// (std::runtime_error naming the addresses that did not answer and the last reason). Between
/// rounds it calls `keep_waiting`, when given: it returns false to stop waiting early (a server
/// process that exited), and then this function returns false; true means every address is ready.
bool wait_until_ready(const std::vector<std::string>& addresses,
                      const std::optional<std::string>& password, std::chrono::milliseconds timeout,
                      const std::function<bool()>& keep_waiting = {},
                      std::optional<long> process_id = std::nullopt);

}  // namespace slipstream::launch
