// `slipstream stream info|dump|replay`: a stream's state, and a stream to and from openPMD HDF5
// files (stream_files.hpp).
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "cli/stream_files.hpp"
#include "server/net/client_limits.hpp"
#include "slipstream/client.hpp"
#include "slipstream/error.hpp"

namespace slipstream::cli {
namespace {

// Labels for SS.STREAM.INFO's fields; a field the server adds later is shown by its own name.
const std::map<std::string, std::string>& info_labels() {
  static const std::map<std::string, std::string> labels = {
      {"writers", "writers"},
      {"writers_attached", "writers attached"},
      {"queue_limit", "queue limit (steps)"},
      {"steps_held", "steps held"},
      {"bytes_held", "bytes held"},
      {"newest_complete", "newest complete step"},
      {"steps_completed", "steps completed"},
      {"steps_aborted", "steps aborted"},
      {"steps_dropped_unread", "steps dropped unread"},
      {"ended", "ended"},
      {"kept_ms", "ended run kept for late readers (ms)"},
      {"position", "position"},
      {"delivered", "steps delivered"},
      {"discarded", "steps discarded"},
      {"aborted", "steps aborted"},
      {"segment_bytes", "shared-memory segment bytes"},
      {"segments", "shared-memory segments"},
      {"segments_made", "shared-memory segments made"},
  };
  return labels;
}

std::string label_of(const std::string& field) {
  auto found = info_labels().find(field);
  if (found != info_labels().end()) return found->second;
  std::string label = field;
  for (char& c : label) {
    if (c == '_') c = ' ';
  }
  return label;
}

std::string value_text(const std::string& field, const Reply& value) {
  if (!value.is_integer()) return value.string;
  const std::int64_t n = value.integer;
  if (field == "ended") return n != 0 ? "yes" : "no";
  if (field == "kept_ms" && n < 0) return "-";
  if ((field == "newest_complete" || field == "position") && n < 0) return "none";
  if (field == "bytes_held" && n >= 1024) {
    char text[48];
    std::snprintf(text, sizeof text, "%lld (%.1f MiB)", static_cast<long long>(n),
                  static_cast<double>(n) / (1024.0 * 1024.0));
    return text;
  }
  return std::to_string(n);
}

void print_line(std::ostream& out, const std::string& indent, const std::string& label,
                const std::string& value) {
  char text[256];
  std::snprintf(text, sizeof text, "%s%-24s %s", indent.c_str(), label.c_str(), value.c_str());
  out << text << "\n";
}

// A group: name, policy, strategy and readers on one line, its counters below.
void print_group(std::ostream& out, const Reply& group) {
  std::map<std::string, const Reply*> fields;
  for (std::size_t k = 0; k + 1 < group.elements.size(); k += 2) {
    fields[group.elements[k].string] = &group.elements[k + 1];
  }
  auto text = [&](const std::string& name) {
    auto found = fields.find(name);
    return found == fields.end() ? std::string("?") : value_text(name, *found->second);
  };
  out << "  group '" << text("name") << "': policy " << text("policy") << ", strategy "
      << text("strategy") << ", " << text("readers") << " of " << text("size")
      << " readers joined\n";
  for (std::size_t k = 0; k + 1 < group.elements.size(); k += 2) {
    const std::string& name = group.elements[k].string;
    if (name == "name" || name == "policy" || name == "strategy" || name == "readers" ||
        name == "size") {
      continue;
    }
    print_line(out, "    ", label_of(name), value_text(name, group.elements[k + 1]));
  }
}

int run_info(const std::string& address, const std::string& stream) {
  ClientOptions options;
  options.address = address;
  Client client(options);
  const Reply reply = client.command({"SS.STREAM.INFO", stream});
  if (!reply.is_array() || reply.elements.size() % 2 != 0) {
    throw ProtocolError("SS.STREAM.INFO: expected field/value pairs");
  }
  std::cout << "stream '" << stream << "'\n";
  for (std::size_t k = 0; k + 1 < reply.elements.size(); k += 2) {
    const std::string& field = reply.elements[k].string;
    const Reply& value = reply.elements[k + 1];
    if (field == "groups" && value.is_array()) {
      print_line(std::cout, "  ", "groups", std::to_string(value.elements.size()));
      for (const Reply& group : value.elements) print_group(std::cout, group);
    } else {
      print_line(std::cout, "  ", label_of(field), value_text(field, value));
    }
  }
  return 0;
}

int run_delete(const std::string& address, const std::vector<std::string>& streams) {
  ClientOptions options;
  options.address = address;
  Client client(options);
  for (const std::string& stream : streams) {  // one at a time: in a cluster each has its shard
    const Reply reply = client.command({"SS.STREAM.DELETE", stream});
    std::cout << "stream '" << stream << "': "
              << (reply.is_integer() && reply.integer > 0 ? "deleted" : "no such stream") << "\n";
  }
  return 0;
}

// A positive byte count with Redis's optional units (64mb, 1gb).
std::uint64_t parse_byte_count(const std::string& option, const std::string& text) {
  const auto bytes = server::parse_memory_size(text);
  if (!bytes || *bytes == 0) {
    throw CLI::ValidationError(option, "'" + text +
                                           "' is not a positive byte count (e.g. 1073741824 or "
                                           "1gb)");
  }
  return *bytes;
}

int without_hdf5(const char* command) {
  std::cerr << "slipstream stream " << command
            << ": this slipstream was built without HDF5, so it cannot read or write openPMD "
               "files (install HDF5's C library and rebuild)\n";
  return 2;
}

}  // namespace

std::function<int()> add_stream_command(CLI::App& app) {
  struct Settings {
    std::string info_address, info_stream;
    std::vector<std::string> delete_streams;
    DumpSettings dump;
    ReplaySettings replay;
    int dump_timeout_ms = 0;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* cmd = app.add_subcommand("stream", "Inspect a stream; dump it to or replay it from "
                                               "openPMD HDF5 files");
  cmd->require_subcommand(1);

  CLI::App* info = cmd->add_subcommand("info", "Print a stream's queue, counters and groups");
  info->add_option("--address", settings->info_address,
                   "Server address (default: SLIPSTREAM_ADDRESS, then SSDB)");
  info->add_option("name", settings->info_stream, "Stream name")->required();

  CLI::App* erase = cmd->add_subcommand(
      "delete", "Delete streams now, with every step they hold; their writers and readers get "
                "errors from then on");
  erase->add_option("--address", settings->info_address,
                    "Server address (default: SLIPSTREAM_ADDRESS, then SSDB)");
  erase->add_option("names", settings->delete_streams, "Stream names")->required();

  CLI::App* dump = cmd->add_subcommand(
      "dump", "Join a reader group and write every step as an openPMD 1.1.0 HDF5 series");
  dump->add_option("--address", settings->dump.address,
                   "Server address (default: SLIPSTREAM_ADDRESS, then SSDB)");
  dump->add_option("--stream", settings->dump.stream, "Stream name")->required();
  dump->add_option("--output", settings->dump.output,
                   "Output file; for fileBased a pattern with %T (e.g. out_%T.h5)")
      ->required();
  dump->add_option("--encoding", settings->dump.encoding,
                   "groupBased (one file) or fileBased (one file per step; default when the "
                   "output has %T)")
      ->check(CLI::IsMember({"groupBased", "fileBased"}));
  dump->add_option("--group", settings->dump.group, "Reader group to join, as its only reader")
      ->capture_default_str();
  dump->add_option("--timeout", settings->dump_timeout_ms,
                   "Stop when no step comes for this many milliseconds (0: wait for the end)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  dump->add_option_function<std::string>(
      "--max-dataset-bytes",
      [settings](const std::string& text) {
        settings->dump.max_dataset_bytes = parse_byte_count("--max-dataset-bytes", text);
      },
      "Largest dataset to write, with units (e.g. 64gb); default: 64 times what the "
      "component's chunks carry, plus 1 MiB");

  CLI::App* replay = cmd->add_subcommand(
      "replay", "Publish every iteration of an openPMD HDF5 series as a stream step");
  replay->add_option("--address", settings->replay.address,
                     "Server address (default: SLIPSTREAM_ADDRESS, then SSDB)");
  replay->add_option("--stream", settings->replay.stream, "Stream name")->required();
  replay->add_option("--input", settings->replay.input,
                     "Series to read: a file, or a pattern with %T for fileBased")
      ->required();
  replay->add_option("--writers", settings->replay.writers,
                     "Writer ranks; each publishes its run of every dataset's rows")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  replay->add_option("--queue", settings->replay.queue_limit, "Steps held at once")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  replay->add_option("--expect-groups", settings->replay.expected_groups,
                     "Reader groups to wait for before steps no group wants may be dropped")
      ->capture_default_str();
  replay->add_option_function<std::string>(
      "--max-bytes",
      [settings](const std::string& text) {
        settings->replay.max_bytes = parse_byte_count("--max-bytes", text);
      },
      "Most bytes one iteration's datasets may hold, with units (e.g. 8gb); default: 1024 "
      "times what the file stores, plus 1 MiB");

  return [settings, info, erase, dump, replay]() -> int {
    if (info->parsed()) return run_info(settings->info_address, settings->info_stream);
    if (erase->parsed()) return run_delete(settings->info_address, settings->delete_streams);
    if (dump->parsed()) {
      if (!have_hdf5()) return without_hdf5("dump");
      settings->dump.timeout = std::chrono::milliseconds(settings->dump_timeout_ms);
      return run_dump(settings->dump);
    }
    if (replay->parsed()) {
      if (!have_hdf5()) return without_hdf5("replay");
      return run_replay(settings->replay);
    }
    return 2;
  };
}

#ifndef SLIPSTREAM_HAVE_HDF5
bool have_hdf5() noexcept { return false; }
int run_dump(const DumpSettings&) { return 2; }
int run_replay(const ReplaySettings&) { return 2; }
#endif

}  // namespace slipstream::cli
