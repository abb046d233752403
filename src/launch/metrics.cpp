// The launcher's metrics; see metrics.hpp.
#include "launch/metrics.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "slipstream/client.hpp"

namespace slipstream::launch {
namespace {

// INFO's "key:value" lines.
std::map<std::string, std::string> info_fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

std::int64_t number(const std::map<std::string, std::string>& f, const std::string& key) {
  const auto it = f.find(key);
  if (it == f.end()) return 0;
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    return 0;
  }
}

// A flat [field, value, ...] reply as a map of text (integers written out).
std::map<std::string, std::string> pairs(const Reply& reply) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const Reply& v = reply.elements[i + 1];
    out[reply.elements[i].string] =
        v.is_integer() ? std::to_string(v.integer) : v.string;
  }
  return out;
}

// A CSV cell: text without commas, quotes or newlines passes as it is.
std::string cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

struct MetricsRecorder::Files {
  std::ofstream servers, models, streams, trainers;
};

MetricsRecorder::MetricsRecorder(const std::string& dir, std::vector<Shard> shards)
    : dir_(dir), shards_(std::move(shards)), files_(std::make_unique<Files>()) {
  std::filesystem::create_directories(dir_);
  clients_.resize(shards_.size());
  previous_.resize(shards_.size());
  files_->servers.open(dir_ + "/servers.csv");
  files_->servers << "time_s,server,ops_per_second,net_input_bytes_per_second,"
                     "net_output_bytes_per_second,used_memory_bytes,shm_used_bytes,"
                     "connected_clients\n";
  files_->models.open(dir_ + "/models.csv");
  files_->models << "time_s,server,model,calls,errors,latency_us\n";
  files_->streams.open(dir_ + "/streams.csv");
  files_->streams << "time_s,server,stream,group,lag_steps,steps_held,bytes_held\n";
  files_->trainers.open(dir_ + "/trainers.csv");
  files_->trainers << "time_s,trainer,state,stream_step,steps_behind,optimizer_steps,train_loss,"
                      "validation_loss,samples_per_second,published_version\n";
}

MetricsRecorder::~MetricsRecorder() = default;

Client* MetricsRecorder::client(std::size_t shard) {
  if (!clients_[shard]) {
    ClientOptions o;
    o.address = shards_[shard].address;
    o.connect_timeout = std::chrono::milliseconds(500);
    o.command_timeout = std::chrono::milliseconds(1000);
    o.reconnect_attempts = 1;
    o.shared_memory = SharedMemoryMode::kOff;
    clients_[shard] = std::make_unique<Client>(o);
  }
  return clients_[shard].get();
}

void MetricsRecorder::sample(double time_s) {
  for (std::size_t k = 0; k < shards_.size(); ++k) {
    try {
      sample_shard(k, time_s);
    } catch (const std::exception&) {
      clients_[k].reset();  // reconnect next time
    }
  }
  for (std::ofstream* f : {&files_->servers, &files_->models, &files_->streams, &files_->trainers}) {
    f->flush();
  }
}

void MetricsRecorder::sample_shard(std::size_t k, double time_s) {
  Client& c = *client(k);
  const Shard& shard = shards_[k];
  std::ostringstream t;
  t << std::fixed << std::setprecision(3) << time_s;
  const std::string now = t.str();

  const auto info = info_fields(c.command({"INFO", "all"}).string);
  Previous& before = previous_[k];
  const std::int64_t commands = number(info, "total_commands_processed");
  const std::int64_t input = number(info, "total_net_input_bytes");
  const std::int64_t output = number(info, "total_net_output_bytes");
  if (before.time_s >= 0 && time_s > before.time_s) {
    const double dt = time_s - before.time_s;
    files_->servers << now << ',' << cell(shard.name) << ','
                    << static_cast<double>(commands - before.commands) / dt << ','
                    << static_cast<double>(input - before.input) / dt << ','
                    << static_cast<double>(output - before.output) / dt << ','
                    << number(info, "used_memory") << ',' << number(info, "shm_used") << ','
                    << number(info, "connected_clients") << '\n';
  }
  before = {time_s, commands, input, output};

  // The trainers that report here name their stream and their model.
  const Reply trainers = c.command({"SS.TRAIN.STATUS"});
  std::set<std::string> streams, models;
  for (const Reply& trainer : trainers.elements) {
    if (trainer.elements.size() != 3) continue;
    auto f = pairs(trainer.elements[2]);
    files_->trainers << now << ',' << cell(trainer.elements[0].string);
    for (const char* key : {"state", "stream_step", "steps_behind", "optimizer_steps",
                            "train_loss", "validation_loss", "samples_per_second",
                            "published_version"}) {
      // Unknown values are empty cells: NaN, and the validation loss of a trainer without one.
      const bool unknown = f[key] == "nan" || (std::string(key) == "validation_loss" && f[key] == "-1");
      files_->trainers << ',' << cell(unknown ? "" : f[key]);
    }
    files_->trainers << '\n';
    if (!f["stream"].empty()) streams.insert(f["stream"]);
    if (!f["model"].empty()) models.insert(f["model"]);
  }
  for (const std::string& stream : streams) {
    Reply reply;
    try {
      reply = c.command({"SS.STREAM.INFO", stream});
    } catch (const ServerError&) {
      continue;  // ended and collected, or on another shard
    }
    auto f = pairs(reply);
    const std::int64_t newest = std::stoll(f.count("newest_complete") ? f["newest_complete"] : "-1");
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      if (reply.elements[i].string != "groups") continue;
      for (const Reply& group : reply.elements[i + 1].elements) {
        auto g = pairs(group);
        const std::int64_t position = std::stoll(g.count("position") ? g["position"] : "-1");
        const std::int64_t lag = newest < 0 ? 0 : std::max<std::int64_t>(0, newest - position);
        files_->streams << now << ',' << cell(shard.name) << ',' << cell(stream) << ','
                        << cell(g["name"]) << ',' << lag << ',' << f["steps_held"] << ','
                        << f["bytes_held"] << '\n';
      }
    }
  }
  for (const std::string& model : models) {
    Reply reply;
    try {
      reply = c.command({"AI.INFO", model});
    } catch (const ServerError&) {
      continue;  // not published yet
    }
    auto f = pairs(reply);
    auto as_number = [&](const char* key) -> std::int64_t {
      try {
        return std::stoll(f[key]);
      } catch (const std::exception&) {
        return 0;
      }
    };
    // A newly published version starts its statistics from zero: its counts are the interval's
    // (the old version's calls since the last sample are not counted).
    ModelPrevious& m = models_[shard.name + "/" + model];
    const std::int64_t version = as_number("version");
    if (version != m.version) m = {version, 0, 0, 0};
    const std::int64_t calls = as_number("calls"), errors = as_number("errors"),
                       duration = as_number("duration");
    if (calls > m.calls) {
      files_->models << now << ',' << cell(shard.name) << ',' << cell(model) << ','
                     << calls - m.calls << ',' << errors - m.errors << ','
                     << static_cast<double>(duration - m.duration_us) /
                            static_cast<double>(calls - m.calls)
                     << '\n';
    }
    m = {version, calls, errors, duration};
  }
}

}  // namespace slipstream::launch
