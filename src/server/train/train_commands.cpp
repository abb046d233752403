// SS.TRAIN.REPORT and SS.TRAIN.STATUS: online trainers' reports (trainer_reports.hpp).
#include "server/train/train_commands.hpp"

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"

namespace slipstream::server {
namespace {

// SS.TRAIN.REPORT name field value [field value ...]
Outcome report(CommandContext& c) {
  if (c.argc() % 2 != 0) {
    c.reply.error("ERR SS.TRAIN.REPORT needs a name, then field value pairs");
    return Outcome::kDone;
  }
  TrainerReports::Fields fields;
  for (std::size_t i = 2; i + 1 < c.argc(); i += 2) {
    fields.emplace_back(std::string(c.arg(i)), std::string(c.arg(i + 1)));
  }
  const std::string error = c.server.trainer_reports().put(std::string(c.arg(1)), std::move(fields));
  if (error.empty()) {
    c.reply.simple("OK");
  } else {
    c.reply.error("ERR " + error);
  }
  return Outcome::kDone;
}

// SS.TRAIN.STATUS [name]: [[name, age-ms, [field, value, ...]], ...]
Outcome status(CommandContext& c) {
  if (c.argc() > 2) {
    c.reply.error("ERR wrong number of arguments for 'SS.TRAIN.STATUS' command");
    return Outcome::kDone;
  }
  const std::string name = c.argc() == 2 ? std::string(c.arg(1)) : std::string();
  const auto reports = c.server.trainer_reports().list(c.argc() == 2 ? &name : nullptr);
  c.reply.array(reports.size());
  for (const auto& r : reports) {
    c.reply.array(3);
    c.reply.bulk(r.name);
    c.reply.integer(r.age.count());
    c.reply.array(2 * r.fields.size());
    for (const auto& [field, value] : r.fields) {
      c.reply.bulk(field);
      c.reply.bulk(value);
    }
  }
  return Outcome::kDone;
}

}  // namespace

// clang-format off
void add_train_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"SS.TRAIN.REPORT", -2, kWrite, 0, 0, 0, report, "train", "name [field value ...]",
     "An online trainer's report of itself (slipstream train sends one every progress line): "
     "replaces name's fields. Bounded: 256 trainers, 64 fields, values of at most 1 KiB. +OK."},
    {"SS.TRAIN.STATUS", -1, kReadOnly, 0, 0, 0, status, "train", "[name]",
     "The trainers' reports on this server: [[name, milliseconds since it reported, [field, "
     "value, ...]], ...]; only name's when given."},
  });
}
// clang-format on

}  // namespace slipstream::server
