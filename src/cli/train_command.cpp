// `slipstream train CONFIG`: runs the trainer, slipstream-train, installed beside this executable
// (a separate program so that only the trainer links MPI). The process is replaced, so under
// mpirun each rank becomes a trainer rank with the launcher's environment intact.
// `slipstream train status [NAME]`: the trainers' reports on a server (SS.TRAIN.STATUS).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "slipstream/client.hpp"

namespace slipstream::cli {
namespace {

int run_trainer(const std::string& config) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path trainer = self.parent_path() / "slipstream-train";
  if (error || !std::filesystem::exists(trainer)) {
    std::cerr << "slipstream train: the trainer program " << trainer.string()
              << " is missing (it is built and installed with slipstream)\n";
    return 1;
  }
  const std::string program = trainer.string();
  std::string argument = config;
  char* const argv[] = {const_cast<char*>(program.c_str()), argument.data(), nullptr};
  ::execv(program.c_str(), argv);
  std::cerr << "slipstream train: cannot run " << program << ": " << std::strerror(errno) << "\n";
  return 1;
}

// One row per trainer: the fields `slipstream train` reports, and how long ago.
int print_status(const std::string& address, const std::string& name) {
  ClientOptions options;
  options.address = address;
  Client client(options);
  std::vector<std::string_view> args = {"SS.TRAIN.STATUS"};
  if (!name.empty()) args.push_back(name);
  const Reply reply = client.command(args);
  if (reply.elements.empty()) {
    std::cout << (name.empty() ? "no trainer has reported to this server\n"
                               : "trainer '" + name + "' has not reported to this server\n");
    return name.empty() ? 0 : 1;
  }
  std::printf("%-28s %-9s %8s %7s %10s %11s %11s %8s %8s %9s\n", "trainer", "state", "step",
              "behind", "opt steps", "loss", "samples/s", "replay", "version", "reported");
  for (const Reply& trainer : reply.elements) {
    if (trainer.elements.size() != 3) continue;
    std::map<std::string, std::string> f;
    const auto& pairs = trainer.elements[2].elements;
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) f[pairs[i].string] = pairs[i + 1].string;
    auto get = [&](const char* key) { return f.count(key) ? f[key] : std::string("-"); };
    std::printf("%-28s %-9s %8s %7s %10s %11s %11s %8s %8s %7.1fs ago\n",
                trainer.elements[0].string.c_str(), get("state").c_str(),
                get("stream_step").c_str(), get("steps_behind").c_str(),
                get("optimizer_steps").c_str(), get("train_loss").c_str(),
                get("samples_per_second").c_str(), get("replay_held").c_str(),
                get("published_version").c_str(),
                static_cast<double>(trainer.elements[1].integer) / 1000.0);
    if (f.count("reason")) std::printf("  reason: %s\n", f["reason"].c_str());
  }
  return 0;
}

}  // namespace

std::function<int()> add_train_command(CLI::App& app) {
  struct Settings {
    std::string config, address, name;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model online from a stream and publish it (docs/training.md)");
  cmd->add_option("config", settings->config, "The trainer's TOML configuration");
  CLI::App* status = cmd->add_subcommand("status", "Print the trainers' reports on a server");
  status->add_option("--address", settings->address,
                     "The server (default: SLIPSTREAM_ADDRESS, then SSDB)");
  status->add_option("name", settings->name, "Only this trainer (stream/group)");
  return [settings, status]() -> int {
    if (status->parsed()) return print_status(settings->address, settings->name);
    if (settings->config.empty()) {
      std::cerr << "slipstream train: give a CONFIG file (or `status`)\n";
      return 2;
    }
    return run_trainer(settings->config);
  };
}

}  // namespace slipstream::cli
