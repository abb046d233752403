// Readiness of a server (see readiness.hpp).
#include "launch/readiness.hpp"

#include <algorithm>
#include <slipstream/client.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace slipstream::launch {

PingResult ping_server(const std::string& address, const std::optional<std::string>& password,
                       std::chrono::milliseconds timeout, std::optional<long> process_id) {
  try {
    ClientOptions o;
    o.address = address;
    o.password = password;
    o.connect_timeout = timeout;
    o.command_timeout = timeout;
    o.reconnect_attempts = 1;
    // One address, one PING: a cluster's shards are pinged one by one, and the client must not
    // ask for (or follow) the cluster map while a shard is still starting.
    o.cluster = ClusterMode::kStandalone;
    o.shared_memory = SharedMemoryMode::kOff;
    Client client(o);
    Reply reply = client.command({"PING"});
    if (reply.string != "PONG") return {false, "PING answered '" + reply.string + "'"};
    if (process_id) {
      const std::string info = client.command({"INFO", "server"}).string;
      const std::string field = "process_id:" + std::to_string(*process_id) + "\r\n";
      if (info.find(field) == std::string::npos) {
        return {false, "another server answers there, not process " + std::to_string(*process_id)};
      }
    }
    return {true, {}};
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
}

std::vector<std::string> split_addresses(const std::string& list) {
  std::vector<std::string> addresses;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    std::size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    std::string entry = list.substr(begin, end - begin);
    const auto first = entry.find_first_not_of(" \t");
    const auto last = entry.find_last_not_of(" \t");
    if (first != std::string::npos) addresses.push_back(entry.substr(first, last - first + 1));
    begin = end + 1;
  }
  if (addresses.empty()) throw std::invalid_argument("no server address in '" + list + "'");
  return addresses;
}

bool wait_until_ready(const std::vector<std::string>& addresses,
                      const std::optional<std::string>& password, std::chrono::milliseconds timeout,
                      const std::function<bool()>& keep_waiting, std::optional<long> process_id) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  std::vector<std::string> waiting = addresses;
  std::string last_reason;
  while (true) {
    std::vector<std::string> still;
    for (const std::string& address : waiting) {
      // Each attempt gets at most 500 ms (or what is left), so a server that appears late is
      // found soon after it starts listening.
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      auto attempt =
          std::clamp(left, std::chrono::milliseconds(50), std::chrono::milliseconds(500));
      PingResult result = ping_server(address, password, attempt, process_id);
      if (!result.ready) {
        still.push_back(address);
        last_reason = address + ": " + result.reason;
      }
    }
    waiting = std::move(still);
    if (waiting.empty()) return true;
    if (keep_waiting && !keep_waiting()) return false;
    if (Clock::now() >= deadline) {
      std::string names;
      for (const std::string& address : waiting) names += (names.empty() ? "" : ", ") + address;
      std::ostringstream message;
      message << names << (waiting.size() == 1 ? " did" : " do") << " not answer PING within "
              << std::chrono::duration<double>(timeout).count()
              << " s (last attempt: " << last_reason << ")";
      throw std::runtime_error(message.str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace slipstream::launch
