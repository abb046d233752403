// A small application for the launcher's tests, started by `slipstream run` as an ensemble member
// (SSDB, SSKEYIN and SSKEYOUT from the launcher, read by the client as a SmartRedis code would).
// Usage: launch_member MODE [ARGS]
//   ensemble VALUE MEMBERS   put "x" = [VALUE] (stored under SSKEYOUT's prefix); wait until every
//                            one of MEMBERS (comma-separated names) has put theirs; check that
//                            "x" reads back its own VALUE, that its raw key is SSKEYOUT.x, that
//                            other members can be read only when SSKEYIN names them; write
//                            member.txt (name, value) in the working directory. Exit 0 if all hold.
//   fail CODE                exit with CODE.
//   fail-once MARKER         fail (exit 4) if MARKER does not exist yet, creating it; else exit 0.
//   sleep SECONDS            print OpenMPI's session folder base when one is set, then a line
//                            per second for SECONDS, then exit 0.
//   hang                     print one line, then sleep without output.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "slipstream/client.hpp"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "launch_member: %s\n", what.c_str());
  return 1;
}

int ensemble(float value, const std::string& members_text) {
  const char* out = std::getenv("SSKEYOUT");
  const char* in = std::getenv("SSKEYIN");
  if (out == nullptr || in == nullptr || std::getenv("SSDB") == nullptr) {
    return fail("SSDB, SSKEYIN and SSKEYOUT must be set by the launcher");
  }
  const std::string self = out;
  const std::vector<std::string> readable = split(in);
  if (readable.empty() || readable.front() != self) {
    return fail("SSKEYIN must start with the member's own prefix, got " + std::string(in));
  }
  slipstream::Client client;
  const std::vector<std::int64_t> shape{1};
  client.put_tensor<float>("x", std::span<const float>(&value, 1), shape);
  if (!client.key_exists(self + ".x")) return fail("the raw key " + self + ".x does not exist");

  std::vector<std::string> keys;
  for (const std::string& m : split(members_text)) keys.push_back(m + ".x");
  if (!client.wait_for_keys(keys, std::chrono::seconds(60))) {
    return fail("the other members' keys did not come within 60 s");
  }
  const slipstream::Tensor own = client.get_tensor("x");
  if (own.data<float>()[0] != value) return fail("\"x\" did not read back the member's own value");
  for (const std::string& m : split(members_text)) {
    if (m == self) continue;
    bool allowed = false;
    for (const std::string& r : readable) allowed |= r == m;
    try {
      client.set_data_source(m);
      if (!allowed) return fail("could read " + m + "'s keys without being told to");
      const float theirs = client.get_tensor("x").data<float>()[0];
      std::printf("read %s.x = %g\n", m.c_str(), theirs);
      client.set_data_source(self);
    } catch (const slipstream::InvalidArgumentError&) {
      if (allowed) return fail("could not read " + m + "'s keys though SSKEYIN names it");
    }
  }
  std::ofstream file("member.txt");
  file << self << " " << value << "\n";
  std::printf("%s: own key %s.x = %g, %zu members seen\n", self.c_str(), self.c_str(), value,
              keys.size());
  return file ? 0 : fail("cannot write member.txt");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "ensemble" && argc == 4) return ensemble(std::stof(argv[2]), argv[3]);
    if (mode == "fail" && argc == 3) {
      std::fprintf(stderr, "failing on purpose with %s\n", argv[2]);
      return std::atoi(argv[2]);
    }
    if (mode == "fail-once" && argc == 3) {
      if (access(argv[2], F_OK) == 0) return 0;
      std::ofstream marker(argv[2]);
      std::fprintf(stderr, "failing once on purpose\n");
      return 4;
    }
    if (mode == "sleep" && argc == 3) {
      if (const char* base = std::getenv("OMPI_MCA_orte_tmpdir_base")) {
        std::printf("session base %s\n", base);
      }
      for (int s = 0; s < std::atoi(argv[2]); ++s) {
        std::printf("second %d\n", s);
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      return 0;
    }
    if (mode == "hang" && argc == 2) {
      std::printf("hanging\n");
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::hours(1));
      return 0;
    }
    return fail("usage: launch_member ensemble VALUE MEMBERS | fail CODE | fail-once MARKER | "
                "sleep SECONDS | hang");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
