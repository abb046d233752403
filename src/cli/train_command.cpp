// `slipstream train CONFIG`: runs the trainer, slipstream-train, installed beside this executable
// (a separate program so that only the trainer links MPI). The process is replaced, so under
// mpirun each rank becomes a trainer rank with the launcher's environment intact.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"

namespace slipstream::cli {

std::function<int()> add_train_command(CLI::App& app) {
  auto config = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model online from a stream and publish it (docs/training.md)");
  cmd->add_option("config", *config, "The trainer's TOML configuration")->required();
  return [config]() -> int {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::filesystem::path trainer = self.parent_path() / "slipstream-train";
    if (error || !std::filesystem::exists(trainer)) {
      std::cerr << "slipstream train: the trainer program " << trainer.string()
                << " is missing (it is built and installed with slipstream)\n";
      return 1;
    }
    const std::string program = trainer.string();
    char* const argv[] = {const_cast<char*>(program.c_str()), config->data(), nullptr};
    ::execv(program.c_str(), argv);
    std::cerr << "slipstream train: cannot run " << program << ": " << std::strerror(errno)
              << "\n";
    return 1;
  };
}

}  // namespace slipstream::cli
