// `slipstream wait-ready [ADDRESS] [--timeout S]`: returns once the server (every shard of a
// comma-separated list, as SSDB holds them) answers PING, or fails at the timeout with the reason
// of the last attempt. For job scripts that start a server and then its clients.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "launch/readiness.hpp"

namespace slipstream::cli {

std::function<int()> add_wait_ready_command(CLI::App& app) {
  struct Options {
    std::string address;
    double timeout_seconds = 30;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "wait-ready",
      "Wait until a server answers PING (exit status 0), or fail after --timeout (status 1). "
      "The password, if any, comes from SLIPSTREAM_PASSWORD");
  cmd->add_option("address", options->address,
                  "host:port, tcp://host:port or unix:///path; a comma-separated list waits for "
                  "every entry (default: SLIPSTREAM_ADDRESS, else every address in SSDB)");
  cmd->add_option("--timeout", options->timeout_seconds, "Seconds to wait at most")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  return [options]() -> int {
    std::string list = options->address;
    if (list.empty()) {
      if (const char* env = std::getenv("SLIPSTREAM_ADDRESS"); env != nullptr && *env != '\0') {
        list = env;
      } else if (const char* ssdb = std::getenv("SSDB"); ssdb != nullptr && *ssdb != '\0') {
        list = ssdb;
      } else {
        std::cerr << "slipstream wait-ready: no address given, and neither SLIPSTREAM_ADDRESS "
                     "nor SSDB is set\n";
        return 2;
      }
    }
    const auto timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(options->timeout_seconds * 1000.0));
    try {
      launch::wait_until_ready(launch::split_addresses(list), std::nullopt, timeout);
    } catch (const std::exception& e) {
      std::cerr << "slipstream wait-ready: " << e.what() << "\n";
      return 1;
    }
    std::cout << "ready: " << list << "\n";
    return 0;
  };
}

}  // namespace slipstream::cli
