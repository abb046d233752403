// The launcher's metrics; see metrics.hpp.
#include "launch/metrics.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "launch/run_dir.hpp"
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

MetricsRecorder::MetricsRecorder(const std::string& dir, std::vector<Shard> shards,
                                 std::optional<std::string> password)
    : dir_(dir),
      shards_(std::move(shards)),
      password_(std::move(password)),
      files_(std::make_unique<Files>()) {
  // Owner-only, as everything the launcher writes in the run directory: each file is made so
  // before the stream opens it (opening an existing file keeps its mode).
  make_private_dir(dir_);
  for (const char* name : {"servers", "models", "streams", "trainers"}) {
    create_private_file(dir_ + "/" + name + ".csv");
  }
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
    o.password = password_;
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
  servers_rate_ = -1;
  if (before.time_s >= 0 && time_s > before.time_s) {
    const double dt = time_s - before.time_s;
    servers_rate_ = static_cast<double>(commands - before.commands) / dt;
    files_->servers << now << ',' << cell(shard.name) << ','
                    << static_cast<double>(commands - before.commands) / dt << ','
                    << static_cast<double>(input - before.input) / dt << ','
                    << static_cast<double>(output - before.output) / dt << ','
                    << number(info, "used_memory") << ',' << number(info, "shm_used") << ','
                    << number(info, "connected_clients") << '\n';
  }
  // Model runs finished in the interval, by latency bucket: one row per bucket that grew, at the
  // bucket's geometric middle (its bounds are powers of two).
  std::vector<std::pair<double, std::int64_t>> latency;  // (upper bound us, count)
  {
    std::istringstream in(info.count("model_latency_us") ? info.at("model_latency_us") : "");
    std::string item;
    while (std::getline(in, item, ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      const std::string bound = item.substr(0, eq);
      latency.emplace_back(bound == "inf" ? -1.0 : std::stod(bound), std::stoll(item.substr(eq + 1)));
    }
  }
  std::vector<std::int64_t> counts;
  for (const auto& [bound, count] : latency) counts.push_back(count);
  if (before.time_s >= 0 && before.latency_counts.size() == counts.size()) {
    for (std::size_t b = 0; b < counts.size(); ++b) {
      const std::int64_t calls = counts[b] - before.latency_counts[b];
      if (calls <= 0) continue;
      const double upper = latency[b].first > 0 ? latency[b].first : 2 * latency[b - 1].first;
      const double middle = b == 0 ? upper / 2 : upper / std::sqrt(2.0);
      files_->models << now << ',' << cell(shard.name) << ",all," << calls << ",0," << middle
                     << '\n';
    }
  }
  before = {time_s, commands, input, output, std::move(counts)};
  {
    std::ostringstream line;
    line << shard.name << " " << std::fixed << std::setprecision(0)
         << (servers_rate_ >= 0 ? servers_rate_ : 0.0) << " ops/s, " << std::setprecision(1)
         << static_cast<double>(number(info, "used_memory") + number(info, "shm_used")) / 1048576.0
         << " MiB";
    latest_["0 " + shard.name] = line.str();
  }

  // The trainers that report here name their stream and their model.
  const Reply trainers = c.command({"SS.TRAIN.STATUS"});
  std::set<std::string> streams;
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
    latest_["1 " + trainer.elements[0].string] =
        trainer.elements[0].string + " " + f["state"] + ", loss " + f["train_loss"] + ", v" +
        (f["published_version"].empty() ? "-" : f["published_version"]);
    if (!f["stream"].empty()) streams.insert(f["stream"]);
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
}

std::string MetricsRecorder::summary() const {
  std::string out;
  for (const auto& [key, part] : latest_) out += (out.empty() ? "" : " | ") + part;
  return out;
}

}  // namespace slipstream::launch
