// `slipstream commands`: prints the command reference generated from the server's command table
// (the source of docs/commands.md, kept in sync by a test).
#include <iostream>

#include "cli/commands.hpp"
#include "server/commands/command_table.hpp"

namespace slipstream::cli {
namespace {

std::string flags_text(std::uint32_t flags) {
  std::string out;
  for (auto name : server::CommandTable::flag_names(flags)) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "-" : out;
}

std::string arity_text(int arity) {
  return arity >= 0 ? std::to_string(arity) : "at least " + std::to_string(-arity);
}

// One table row; `name` is the command's, or "CONTAINER SUB" for a subcommand.
void print_row(std::ostream& out, std::string_view name, const server::CommandSpec& spec) {
  std::string syntax(spec.syntax);
  for (char& c : syntax) {
    if (c == '|') c = '/';
  }
  std::string summary;  // a '|' ("config|get") would end the cell; its HTML entity does not
  for (char c : spec.summary) {
    if (c == '|') {
      summary += "&#124;";
    } else {
      summary += c;
    }
  }
  out << "| `" << name << "` | `" << (syntax.empty() ? "-" : syntax) << "` | "
      << arity_text(spec.arity) << " | " << flags_text(spec.flags) << " | " << summary << " |\n";
}

void print_markdown(std::ostream& out) {
  server::CommandTable table;
  std::string_view group;
  for (const auto& spec : table.all()) {
    if (spec.group != group) {
      group = spec.group;
      out << "\n### " << group << "\n\n";
      out << "| command | arguments | arity | flags | reply and behaviour |\n";
      out << "|---|---|---|---|---|\n";
    }
    print_row(out, spec.name, spec);
    // A container's subcommands follow it; their arity counts the container's name, as Redis's.
    for (const auto& sub : spec.subcommands) {
      print_row(out, std::string(spec.name) + " " + std::string(sub.name), sub);
    }
  }
}

}  // namespace

std::function<int()> add_commands_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "commands", "Print the server's command reference (Markdown), from its command table");
  (void)cmd;
  return [] {
    print_markdown(std::cout);
    return 0;
  };
}

}  // namespace slipstream::cli
