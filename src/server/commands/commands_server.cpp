// Server commands: INFO, DBSIZE, FLUSHDB, FLUSHALL, CONFIG, SAVE, LASTSAVE, SHUTDOWN, COMMAND, TIME.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/ascii.hpp"
#include "common/glob.hpp"
#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/net/tcp_keepalive.hpp"
#include "server/server.hpp"
#include "server/net/session.hpp"

namespace slipstream::server {
namespace {

Outcome dbsize(CommandContext& c) {
  c.reply.integer(static_cast<std::int64_t>(c.server.keyspace().size()));
  return Outcome::kDone;
}

Outcome flush(CommandContext& c) {
  if (c.argc() > 2 || (c.argc() == 2 && !equals_nocase(c.arg(1), "SYNC") &&
                       !equals_nocase(c.arg(1), "ASYNC"))) {
    c.reply.error(kSyntaxError);
    return Outcome::kDone;
  }
  std::size_t keys = c.server.keyspace().size();
  c.server.keyspace().clear();
  // FLUSHALL removes everything, streams too (FLUSHDB only the keys): streams hold memory that
  // counts against --maxmemory, and nothing else would give it back.
  if (equals_nocase(c.arg(0), "FLUSHALL")) c.server.streams().erase_all();
  c.server.mark_dirty(keys);
  c.reply.simple("OK");
  return Outcome::kDone;
}

std::string human_bytes(std::size_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{}B", bytes) : fmt::format("{:.2f}{}", value, units[unit]);
}

// One INFO section; `name` is lower case. Appends "# Title\r\n" and its fields.
using SectionWriter = std::function<void(Server&, std::string&)>;
struct InfoSection {
  std::string_view name;
  std::string_view title;
  bool in_default;
  SectionWriter write;
};

void info_server(Server& s, std::string& out) {
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::steady_clock::now() - s.start_time())
                    .count();
  out += fmt::format(
      "redis_version:{}\r\nslipstream_version:{}\r\nredis_mode:{}\r\n"
      "os:Linux\r\narch_bits:64\r\nmultiplexing_api:epoll\r\nprocess_id:{}\r\nrun_id:{}\r\n"
      "tcp_port:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nio_threads_active:{}\r\n"
      "executable:slipstream\r\n",
      kRedisCompatVersion, kSlipstreamVersion, s.cluster() ? "cluster" : "standalone",
      ::getpid(), s.run_id(), s.bound_port(), uptime, uptime / 86400, s.io_threads());
}

void info_clients(Server& s, std::string& out) {
  out += fmt::format("connected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\n",
                     s.connected_clients(), s.max_clients(), s.blocked_clients());
  // The largest input (unparsed bytes and the request being received) and output (replies
  // waiting) of any client in the last 8 seconds, and the budget for arguments being received.
  const ClientLimits& limits = s.client_limits();
  out += fmt::format(
      "client_recent_max_input_buffer:{}\r\nclient_recent_max_output_buffer:{}\r\n"
      "pending_input_reserved:{}\r\npending_input_capacity:{}\r\n",
      limits.input_peak().get(), limits.output_peak().get(), limits.input_budget().reserved(),
      limits.input_budget().capacity());
}

void info_memory(Server& s, std::string& out) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  // used_memory is what --maxmemory limits: stored values plus shared-memory loans not yet
  // committed (shown again on their own).
  std::size_t used = s.keyspace().used_memory();
  std::size_t loans = s.keyspace().reserved_memory();
  std::size_t max = s.keyspace().max_memory();
  std::size_t rss = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  out += fmt::format(
      "used_memory:{}\r\nused_memory_human:{}\r\nused_memory_shm_loans:{}\r\n"
      "used_memory_peak_rss:{}\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\n"
      "maxmemory_policy:noeviction\r\n",
      used, human_bytes(used), loans, rss, max, human_bytes(max));
  // The shared-memory fast path: its pool (--shm-size), what it holds, and who holds it.
  const SharedMemory& shm = s.shared_memory();
  const ShmCounters& counters = *shm.counters();
  // Spares (files made ahead for loans) are counted apart: they give way to any value.
  const std::size_t spare = counters.spare_bytes.load();
  const std::size_t shm_used = counters.used_bytes.load() - std::min(spare, counters.used_bytes.load());
  out += fmt::format(
      "shm_enabled:{}\r\nshm_size:{}\r\nshm_used:{}\r\nshm_used_human:{}\r\nshm_free:{}\r\n"
      "shm_segments:{}\r\nshm_files:{}\r\nshm_max_files:{}\r\nshm_loans:{}\r\nshm_leases:{}\r\n"
      "shm_attached_clients:{}\r\nshm_spares:{}\r\nshm_spare_bytes:{}\r\nshm_pool_hits:{}\r\n"
      "shm_pool_misses:{}\r\nshm_huge_pages:{}\r\nshm_descriptors_passed:{}\r\n"
      "shm_loans_ahead:{}\r\nshm_loans_ahead_bytes:{}\r\nshm_spares_ready:{}\r\n",
      shm.enabled() ? 1 : 0, shm.capacity(), shm_used, human_bytes(shm_used),
      shm.capacity() - std::min(shm_used, shm.capacity()), counters.segments.load(),
      counters.files.load(), shm.max_files(), counters.loans.load(), counters.leases.load(),
      counters.attached_clients.load(), counters.spares.load(), spare, counters.pool_hits.load(),
      counters.pool_misses.load(), ShmSparePool::huge_pages() ? 1 : 0,
      counters.total_descriptors_passed.load(), counters.loans_ahead.load(),
      counters.loans_ahead_bytes.load(), counters.spares_ready.load());
  // Model inputs held here that reached a model worker mapped, not copied, and outputs that came
  // back as files (issue 32).
  const ml::Backend::FileCounters files =
      s.backend() != nullptr ? s.backend()->file_counters() : ml::Backend::FileCounters{};
  out += fmt::format(
      "shm_model_inputs_mapped:{}\r\nshm_model_input_bytes_mapped:{}\r\n"
      "shm_model_outputs_in_files:{}\r\nshm_model_output_bytes_in_files:{}\r\n",
      files.inputs, files.input_bytes, files.outputs, files.output_bytes);
}

void info_persistence(Server& s, std::string& out) {
  out += fmt::format(
      "loading:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:0\r\n"
      "rdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\naof_enabled:0\r\n",
      s.changes_since_save(), static_cast<long long>(s.last_save_time()),
      s.last_save_ok() ? "ok" : "err");
}

void info_stats(Server& s, std::string& out) {
  const Stats& st = s.stats();
  out += fmt::format(
      "total_connections_received:{}\r\ntotal_commands_processed:{}\r\n"
      "total_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\nrejected_connections:{}\r\n"
      "keyspace_hits:{}\r\nkeyspace_misses:{}\r\ntotal_error_replies:{}\r\n"
      "protocol_errors:{}\r\n",
      st.connections_received.load(), st.commands_processed.load(), st.net_input_bytes.load(),
      st.net_output_bytes.load(), st.rejected_connections.load(), st.keyspace_hits.load(),
      st.keyspace_misses.load(), st.error_replies.load(), st.protocol_errors.load());
  const ShmCounters& shm = *s.shared_memory().counters();
  out += fmt::format(
      "shm_commits:{}\r\nshm_views:{}\r\nshm_view_copies:{}\r\nshm_refusals:{}\r\n",
      shm.total_commits.load(), shm.total_views.load(), shm.total_view_copies.load(),
      shm.total_refusals.load());
  const ClientLimits& limits = s.client_limits();
  out += fmt::format(
      "client_query_buffer_limit_disconnections:{}\r\n"
      "client_output_buffer_limit_disconnections:{}\r\n",
      limits.query_buffer_disconnections.load(), limits.output_buffer_disconnections.load());
}

void info_cpu(Server&, std::string& out) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  out += fmt::format("used_cpu_sys:{}.{:06}\r\nused_cpu_user:{}.{:06}\r\n",
                     usage.ru_stime.tv_sec, usage.ru_stime.tv_usec, usage.ru_utime.tv_sec,
                     usage.ru_utime.tv_usec);
}

// One line per stored model and script. Walks the keyspace, so it is left out of INFO's default
// sections (INFO models, ALL or EVERYTHING ask for it).
void info_models(Server& s, std::string& out) {
  out += fmt::format("executor_threads:{}\r\nexecutor_queued:{}\r\nmodel_latency_us:{}\r\n",
                     s.executor().threads(), s.executor().queued(),
                     s.executor().latency().text());
  s.keyspace().for_each([&](const std::string& key, const ValuePtr& value) {
    if (value->type() != ValueType::kModel && value->type() != ValueType::kScript) return;
    const bool model = value->type() == ValueType::kModel;
    const ml::ExecutionStats& st = model ? *value->model().stats : *value->script().stats;
    const std::uint64_t batches = st.batches.load();
    const double mean_batch =
        batches ? static_cast<double>(st.batched_calls.load()) / static_cast<double>(batches) : 0;
    const std::uint64_t calls = st.calls.load();
    out += fmt::format(
        "{}_{}:version={},device={},calls={},samples={},errors={},runs={},batches={},"
        "mean_batch_size={:.2f},mean_queue_wait_us={},mean_run_time_us={},loaded={}\r\n",
        model ? "model" : "script", key, model ? value->model().version : value->script().version,
        model ? value->model().device : value->script().device, calls, st.samples.load(),
        st.errors.load(), st.runs.load(), batches, mean_batch,
        calls ? st.queue_wait_us.load() / calls : 0,
        st.runs.load() ? st.run_time_us.load() / st.runs.load() : 0,
        (model ? value->model().runtime != nullptr : value->script().runtime != nullptr) ? 1 : 0);
  });
}

void info_cluster(Server& s, std::string& out) {
  out += fmt::format("cluster_enabled:{}\r\n", s.cluster() ? 1 : 0);
}

void info_keyspace(Server& s, std::string& out) {
  std::size_t keys = s.keyspace().size();
  if (keys > 0) out += fmt::format("db0:keys={},expires=0,avg_ttl=0\r\n", keys);
}

void info_streams(Server& s, std::string& out) {
  const StreamTotals totals = s.streams().totals();
  out += fmt::format(
      "streams:{}\r\nstreams_ended_kept:{}\r\nstream_bytes_held:{}\r\nstream_steps_held:{}\r\n"
      "stream_segment_bytes:{}\r\n",
      totals.streams, totals.ended_kept, totals.bytes_held, totals.steps_held,
      totals.segment_bytes);
  // Colocated chunks this shard keeps for streams of other shards, and the messages this shard's
  // streams have for the others (cluster mode).
  out += fmt::format("colocated_chunks:{}\r\ncolocated_chunk_bytes:{}\r\n",
                     s.chunk_store().chunks(), s.chunk_store().bytes());
  if (const PeerLinks* peers = s.peers()) {
    const PeerLinks::Stats stats = peers->stats();
    out += fmt::format("peer_messages_queued:{}\r\npeer_messages_delivered:{}\r\n"
                       "peer_messages_dropped:{}\r\n",
                       stats.queued, stats.delivered, stats.dropped);
  }
}

// A value as INFO shows it: no line breaks, commas or '=' (they separate INFO's fields).
std::string info_value(std::string_view value) {
  std::string out(value.substr(0, 128));
  for (char& ch : out) {
    if (ch == '\r' || ch == '\n' || ch == ',' || ch == '=' || ch == ':') ch = '_';
  }
  return out;
}

// Online trainers' reports (SS.TRAIN.REPORT): one line each, its fields as INFO's key=value list.
void info_training(Server& s, std::string& out) {
  const auto reports = s.trainer_reports().list();
  out += fmt::format("trainers:{}\r\n", reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    out += fmt::format("trainer{}:name={},age_ms={}", i, info_value(reports[i].name),
                       reports[i].age.count());
    for (const auto& [field, value] : reports[i].fields) {
      out += "," + info_value(field) + "=" + info_value(value);
    }
    out += "\r\n";
  }
}

const std::vector<InfoSection>& info_sections() {
  static const std::vector<InfoSection> sections = {
      {"server", "Server", true, info_server},
      {"clients", "Clients", true, info_clients},
      {"memory", "Memory", true, info_memory},
      {"persistence", "Persistence", true, info_persistence},
      {"stats", "Stats", true, info_stats},
      {"cpu", "CPU", true, info_cpu},
      {"cluster", "Cluster", true, info_cluster},
      {"keyspace", "Keyspace", true, info_keyspace},
      {"streams", "Streams", true, info_streams},
      {"training", "Training", true, info_training},
      {"models", "Models", false, info_models},
  };
  return sections;
}

Outcome info(CommandContext& c) {
  bool everything = c.argc() == 1;
  bool defaults = c.argc() == 1;
  std::vector<std::string_view> wanted;
  for (std::size_t i = 1; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "ALL") || equals_nocase(c.arg(i), "EVERYTHING")) {
      everything = true;
    } else if (equals_nocase(c.arg(i), "DEFAULT")) {
      defaults = true;
    } else {
      wanted.push_back(c.arg(i));
    }
  }
  std::string out;
  for (const auto& section : info_sections()) {
    bool include = everything || (defaults && section.in_default);
    for (auto name : wanted) include = include || equals_nocase(name, section.name);
    if (!include) continue;
    if (!out.empty()) out += "\r\n";
    out += "# ";
    out += section.title;
    out += "\r\n";
    section.write(c.server, out);
  }
  c.reply.verbatim(out);
  return Outcome::kDone;
}

// ---- CONFIG: a documented subset of parameters (docs/commands.md lists them).
struct ConfigParam {
  std::string_view name;
  std::function<std::string(Server&)> get;
  // Returns an empty string on success, else the reason the value is invalid.
  std::function<std::string(Server&, std::string_view)> set;  // null = read-only
  // Redis 7's protected configs: settable only at start-up. A client that could move `dir` or
  // `dbfilename` could make SAVE overwrite any file the server may write.
  bool protected_config = false;
};

// A byte count in Redis's units (4294967296, 4gb, 100mb), at least `least`.
std::string set_size(std::string_view value, const std::function<void(std::size_t)>& apply,
                     std::size_t least = 0) {
  auto parsed = parse_memory_size(value);
  if (!parsed) return "argument must be a memory value (bytes, or with a unit: 100mb, 4gb)";
  if (*parsed < least) {
    return "argument must be at least " + std::to_string(least) + " bytes";
  }
  apply(*parsed);
  return {};
}

// Redis settings that clients set and that mean nothing here (no Lua, no slow log, no latency
// monitor, no keyspace notifications, no listpack encodings, no AOF, no lazy freeing): SmartRedis's
// config_set sends some of them (lua-time-limit, ignore-warnings). They are accepted, checked as
// Redis checks their type, stored, and answered on CONFIG GET (Redis 7's default until set); they
// change nothing. Names Redis does not know stay refused.
struct StoredSetting {
  std::string_view name;
  std::string_view redis_default;
  enum class Kind { kInteger, kYesNo, kText } kind;
};
constexpr StoredSetting kStoredSettings[] = {
    {"lua-time-limit", "5000", StoredSetting::Kind::kInteger},
    {"busy-reply-threshold", "5000", StoredSetting::Kind::kInteger},
    {"ignore-warnings", "", StoredSetting::Kind::kText},
    {"slowlog-log-slower-than", "10000", StoredSetting::Kind::kInteger},
    {"slowlog-max-len", "128", StoredSetting::Kind::kInteger},
    {"latency-monitor-threshold", "0", StoredSetting::Kind::kInteger},
    {"latency-tracking", "yes", StoredSetting::Kind::kYesNo},
    {"notify-keyspace-events", "", StoredSetting::Kind::kText},
    {"hz", "10", StoredSetting::Kind::kInteger},
    {"dynamic-hz", "yes", StoredSetting::Kind::kYesNo},
    {"timeout", "0", StoredSetting::Kind::kInteger},
    {"maxmemory-samples", "5", StoredSetting::Kind::kInteger},
    {"activerehashing", "yes", StoredSetting::Kind::kYesNo},
    {"lazyfree-lazy-eviction", "no", StoredSetting::Kind::kYesNo},
    {"lazyfree-lazy-expire", "no", StoredSetting::Kind::kYesNo},
    {"lazyfree-lazy-server-del", "no", StoredSetting::Kind::kYesNo},
    {"lazyfree-lazy-user-del", "no", StoredSetting::Kind::kYesNo},
    {"appendfsync", "everysec", StoredSetting::Kind::kText},
    {"hash-max-listpack-entries", "128", StoredSetting::Kind::kInteger},
    {"hash-max-listpack-value", "64", StoredSetting::Kind::kInteger},
    {"list-max-listpack-size", "-2", StoredSetting::Kind::kInteger},
    {"list-compress-depth", "0", StoredSetting::Kind::kInteger},
    {"set-max-intset-entries", "512", StoredSetting::Kind::kInteger},
    {"zset-max-listpack-entries", "128", StoredSetting::Kind::kInteger},
    {"stream-node-max-bytes", "4096", StoredSetting::Kind::kInteger},
    {"stream-node-max-entries", "100", StoredSetting::Kind::kInteger},
};

ConfigParam stored_param(const StoredSetting& setting) {
  const std::string name(setting.name), fallback(setting.redis_default);
  const StoredSetting::Kind kind = setting.kind;
  return ConfigParam{
      setting.name,
      [name, fallback](Server& s) { return s.stored_setting(name).value_or(fallback); },
      [name, kind](Server& s, std::string_view v) {
        if (kind == StoredSetting::Kind::kInteger && !parse_int(v)) {
          return std::string("argument must be an integer");
        }
        if (kind == StoredSetting::Kind::kYesNo && !equals_nocase(v, "yes") &&
            !equals_nocase(v, "no")) {
          return std::string("argument must be 'yes' or 'no'");
        }
        s.store_setting(name, kind == StoredSetting::Kind::kYesNo ? ascii_lower(v) : std::string(v));
        return std::string();
      }};
}

std::vector<ConfigParam> make_config_params() {
  std::vector<ConfigParam> params = {
      {"maxmemory", [](Server& s) { return std::to_string(s.keyspace().max_memory()); },
       [](Server& s, std::string_view v) {
         return set_size(v, [&](std::size_t n) { s.keyspace().set_max_memory(n); });
       }},
      {"maxmemory-policy", [](Server&) { return std::string("noeviction"); }, nullptr},
      // For connections accepted from now on, as in Redis.
      {"tcp-keepalive", [](Server& s) { return std::to_string(s.tcp_keepalive()); },
       [](Server& s, std::string_view v) {
         auto parsed = parse_int(v);
         if (!parsed || *parsed < 0 || *parsed > kMaxTcpKeepalive) {
           return "argument must be between 0 and " + std::to_string(kMaxTcpKeepalive);
         }
         s.set_tcp_keepalive(static_cast<std::uint32_t>(*parsed));
         return std::string();
       }},
      {"maxclients", [](Server& s) { return std::to_string(s.max_clients()); },
       [](Server& s, std::string_view v) {
         // 0 would refuse every new connection, including the one needed to undo it.
         auto parsed = parse_int(v);
         if (!parsed || *parsed < 1) return std::string("argument must be a positive integer");
         s.set_max_clients(static_cast<std::size_t>(*parsed));
         return std::string();
       }},
      {"proto-max-bulk-len", [](Server& s) { return std::to_string(s.max_bulk_len()); },
       [](Server& s, std::string_view v) {
         // Below 1mb, ordinary requests (a model, a SmartRedis tensor) would be refused: the
         // server would be unusable until someone undid it.
         return set_size(v, [&](std::size_t n) { s.set_max_bulk_len(n); }, std::size_t{1} << 20);
       }},
      // Client memory bounds (net/client_limits.hpp); sizes take Redis's units (64mb, 1gb).
      {"client-query-buffer-limit",
       [](Server& s) { return std::to_string(s.client_limits().query_buffer_limit()); },
       [](Server& s, std::string_view v) {
         auto bytes = parse_memory_size(v);
         if (!bytes) return std::string("argument must be a byte count (1073741824 or 1gb)");
         s.client_limits().set_query_buffer_limit(*bytes);
         return std::string();
       }},
      {"client-output-buffer-limit",
       [](Server& s) { return format_output_buffer_limit(s.client_limits().output_limit()); },
       [](Server& s, std::string_view v) {
         std::string error;
         auto limit = parse_output_buffer_limit(v, &error);
         if (limit) s.client_limits().set_output_limit(*limit);
         return error;
       }},
      {"max-pending-input",
       [](Server& s) { return std::to_string(s.client_limits().input_budget().capacity()); },
       [](Server& s, std::string_view v) {
         auto bytes = parse_memory_size(v);
         if (!bytes) return std::string("argument must be a byte count (0: the default)");
         s.client_limits().set_max_pending_input(*bytes);
         return std::string();
       }},
      {"requirepass", [](Server& s) { return s.password(); },
       [](Server& s, std::string_view v) {
         s.set_password(std::string(v));
         return std::string();
       }},
      {"protected-mode", [](Server& s) { return std::string(s.protected_mode() ? "yes" : "no"); },
       [](Server& s, std::string_view v) {
         if (!equals_nocase(v, "yes") && !equals_nocase(v, "no")) {
           return std::string("argument must be 'yes' or 'no'");
         }
         s.set_protected_mode(equals_nocase(v, "yes"));
         return std::string();
       }},
      {"dir", [](Server& s) { return s.dir(); }, nullptr, true},
      {"dbfilename", [](Server& s) { return s.options().db_filename; }, nullptr, true},
      {"loglevel", [](Server& s) { return s.log_level(); },
       [](Server& s, std::string_view v) {
         return s.set_log_level(std::string(v))
                    ? std::string()
                    : std::string("argument must be one of trace, debug, info, warn, error");
       }},
      {"port", [](Server& s) { return std::to_string(s.bound_port()); }, nullptr},
      {"bind", [](Server& s) { return s.options().bind; }, nullptr},
      {"unixsocket", [](Server& s) { return s.options().unix_socket; }, nullptr},
      {"unixsocketperm",
       [](Server& s) { return fmt::format("{:o}", s.options().unix_socket_perm); }, nullptr},
      {"io-threads", [](Server& s) { return std::to_string(s.io_threads()); }, nullptr},
      {"databases", [](Server&) { return std::string("1"); }, nullptr},
      {"save", [](Server&) { return std::string(""); }, nullptr},
      {"appendonly", [](Server&) { return std::string("no"); }, nullptr},
  };
  for (const StoredSetting& setting : kStoredSettings) params.push_back(stored_param(setting));
  return params;
}

const std::vector<ConfigParam>& config_params() {
  static const std::vector<ConfigParam> params = make_config_params();
  return params;
}

Outcome config_get(CommandContext& c) {
  std::vector<std::pair<std::string_view, std::string>> found;
  for (const auto& param : config_params()) {
    for (std::size_t i = 2; i < c.argc(); ++i) {
      if (glob_match(c.arg(i), param.name, true)) {
        found.emplace_back(param.name, param.get(c.server));
        break;
      }
    }
  }
  c.reply.map(found.size());
  for (const auto& [name, value] : found) {
    c.reply.bulk(name);
    c.reply.bulk(value);
  }
  return Outcome::kDone;
}

Outcome config_set(CommandContext& c) {
  // Parameter-value pairs: the table's arity (at least 4) cannot say "an even count".
  if (c.argc() % 2 != 0) {
    c.reply.error(subcommand_arity_error("config", "set"));
    return Outcome::kDone;
  }
  // Validate every pair before applying any, so a bad pair changes nothing.
  std::vector<const ConfigParam*> targets;
  for (std::size_t i = 2; i < c.argc(); i += 2) {
    const ConfigParam* target = nullptr;
    for (const auto& param : config_params()) {
      if (equals_nocase(param.name, c.arg(i))) target = &param;
    }
    if (target != nullptr && target->protected_config) {
      c.reply.error("ERR CONFIG SET failed (possibly related to argument '" +
                    std::string(target->name) + "') - can't set protected config");
      return Outcome::kDone;
    }
    if (target == nullptr || !target->set) {
      c.reply.error("ERR Unknown option or number of arguments for CONFIG SET - '" +
                    std::string(c.arg(i)) + "'");
      return Outcome::kDone;
    }
    targets.push_back(target);
  }
  for (std::size_t k = 0; k < targets.size(); ++k) {
    std::string problem = targets[k]->set(c.server, c.arg(3 + 2 * k));
    if (!problem.empty()) {
      c.reply.error("ERR CONFIG SET failed (possibly related to argument '" +
                    std::string(targets[k]->name) + "') - " + problem);
      return Outcome::kDone;
    }
  }
  c.reply.simple("OK");
  return Outcome::kDone;
}

Outcome config_resetstat(CommandContext& c) {
  Stats& st = c.server.stats();
  for (auto* counter : {&st.commands_processed, &st.keyspace_hits, &st.keyspace_misses,
                        &st.net_input_bytes, &st.net_output_bytes, &st.rejected_connections,
                        &st.error_replies, &st.protocol_errors, &st.connections_received}) {
    counter->store(0);
  }
  c.reply.simple("OK");
  return Outcome::kDone;
}

constexpr CommandSpec kConfigSubcommands[] = {
    {"GET", -3, kAdmin | kStale, 0, 0, 0, config_get, "server", "pattern [pattern ...]",
     "The parameters matching the glob patterns, as a map (an empty one when none match)."},
    {"SET", -4, kAdmin | kStale, 0, 0, 0, config_set, "server",
     "parameter value [parameter value ...]",
     "Sets the parameters; every pair is checked before any is applied."},
    {"RESETSTAT", 2, kAdmin | kStale, 0, 0, 0, config_resetstat, "server", "",
     "Zeroes INFO's command, keyspace, network and error counters."},
};

Outcome save(CommandContext& c) {
  std::string error;
  if (c.server.save(&error)) {
    c.reply.simple("OK");
  } else {
    c.reply.error("ERR snapshot failed: " + error);
  }
  return Outcome::kDone;
}

Outcome lastsave(CommandContext& c) {
  c.reply.integer(static_cast<std::int64_t>(c.server.last_save_time()));
  return Outcome::kDone;
}

Outcome shutdown(CommandContext& c) {
  bool save_first = true, force = false;
  for (std::size_t i = 1; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "NOSAVE")) {
      save_first = false;
    } else if (equals_nocase(c.arg(i), "SAVE")) {
      save_first = true;
    } else if (equals_nocase(c.arg(i), "FORCE")) {
      force = true;
    } else if (!equals_nocase(c.arg(i), "NOW")) {
      c.reply.error(kSyntaxError);
      return Outcome::kDone;
    }
  }
  std::string error;
  if (!c.server.request_shutdown(save_first, &error)) {
    if (!force) {
      c.reply.error("ERR Errors trying to SHUTDOWN. Check logs.");
      return Outcome::kDone;
    }
    // FORCE stops anyway, as in Redis; the exit status still tells that the data was not saved.
    spdlog::error("SHUTDOWN FORCE: could not save ({}); exiting without saving, status 1", error);
    c.server.set_exit_code(1);
    c.server.request_shutdown(false);
  }
  // On success Redis sends no reply: the connection closes as the server stops.
  return Outcome::kDone;
}

Outcome time_command(CommandContext& c) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now).count();
  c.reply.array(2);
  c.reply.bulk(std::to_string(us / 1000000));
  c.reply.bulk(std::to_string(us % 1000000));
  return Outcome::kDone;
}

// ---- COMMAND: generated from the command table.
std::string lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// One COMMAND / COMMAND INFO entry: Redis 7's ten elements. A container's last element holds
// an entry for each of its subcommands, named "container|sub".
void reply_command_entry(ReplyBuffer& reply, const CommandSpec& spec, std::string_view name) {
  reply.array(10);
  reply.bulk(name);
  reply.integer(spec.arity);
  auto flags = CommandTable::flag_names(spec.flags);
  reply.set(flags.size());
  for (auto flag : flags) reply.simple(flag);
  reply.integer(spec.first_key);
  reply.integer(spec.last_key);
  reply.integer(spec.key_step);
  reply.set(1);
  std::string category = "@";
  category.append(spec.group);
  reply.simple(category);
  reply.set(0);    // tips
  reply.array(0);  // key specs
  reply.array(spec.subcommands.size());
  for (const CommandSpec& sub : spec.subcommands) {
    reply_command_entry(reply, sub, CommandTable::full_name(spec, sub));
  }
}

// A command by name for COMMAND INFO / DOCS: "get", or a subcommand as "config|get".
struct NamedSpec {
  const CommandSpec* spec = nullptr;
  std::string name;  // lower case, full
};

NamedSpec find_named(const CommandTable& table, std::string_view name) {
  const std::size_t bar = name.find('|');
  const CommandSpec* spec = table.find(name.substr(0, bar));
  if (spec == nullptr) return {};
  if (bar == std::string_view::npos) return {spec, lower(spec->name)};
  const CommandSpec* sub = CommandTable::find_subcommand(*spec, name.substr(bar + 1));
  if (sub == nullptr) return {};
  return {sub, CommandTable::full_name(*spec, *sub)};
}

// COMMAND alone: every command's entry.
Outcome command_all(CommandContext& c) {
  const CommandTable& table = c.server.commands();
  c.reply.array(table.all().size());
  for (const auto& spec : table.all()) reply_command_entry(c.reply, spec, lower(spec.name));
  return Outcome::kDone;
}

Outcome command_count(CommandContext& c) {
  c.reply.integer(static_cast<std::int64_t>(c.server.commands().all().size()));
  return Outcome::kDone;
}

Outcome command_info(CommandContext& c) {
  if (c.argc() == 2) return command_all(c);
  c.reply.array(c.argc() - 2);
  for (std::size_t i = 2; i < c.argc(); ++i) {
    NamedSpec named = find_named(c.server.commands(), c.arg(i));
    if (named.spec == nullptr) {
      c.reply.null_array();
    } else {
      reply_command_entry(c.reply, *named.spec, named.name);
    }
  }
  return Outcome::kDone;
}

// Every command's name, each container's followed by its subcommands' ("config|get"), as
// Redis 7 lists them.
Outcome command_list(CommandContext& c) {
  const CommandTable& table = c.server.commands();
  std::size_t n = 0;
  for (const auto& spec : table.all()) n += 1 + spec.subcommands.size();
  c.reply.array(n);
  for (const auto& spec : table.all()) {
    c.reply.bulk(lower(spec.name));
    for (const CommandSpec& sub : spec.subcommands) {
      c.reply.bulk(CommandTable::full_name(spec, sub));
    }
  }
  return Outcome::kDone;
}

// One COMMAND DOCS entry: summary, since, group, and a container's subcommands' entries.
void reply_docs_entry(ReplyBuffer& reply, const CommandSpec& spec) {
  reply.map(spec.subcommands.empty() ? 3 : 4);
  reply.bulk("summary");
  reply.bulk(spec.summary);
  reply.bulk("since");
  reply.bulk(kSlipstreamVersion);
  reply.bulk("group");
  reply.bulk(spec.group);
  if (spec.subcommands.empty()) return;
  reply.bulk("subcommands");
  reply.map(spec.subcommands.size());
  for (const CommandSpec& sub : spec.subcommands) {
    reply.bulk(CommandTable::full_name(spec, sub));
    reply_docs_entry(reply, sub);
  }
}

Outcome command_docs(CommandContext& c) {
  const CommandTable& table = c.server.commands();
  std::vector<NamedSpec> specs;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    NamedSpec named = find_named(table, c.arg(i));
    if (named.spec != nullptr) specs.push_back(std::move(named));
  }
  if (c.argc() == 2) {
    for (const auto& spec : table.all()) specs.push_back({&spec, lower(spec.name)});
  }
  c.reply.map(specs.size());
  for (const NamedSpec& named : specs) {
    c.reply.bulk(named.name);
    reply_docs_entry(c.reply, *named.spec);
  }
  return Outcome::kDone;
}

// COMMAND answers an unknown subcommand and a wrong count alike, with the text it always had.
std::string command_subcommand_error(const CommandSpec&, std::string_view sub, const CommandSpec*) {
  return "ERR unknown subcommand or wrong number of arguments for '" +
         std::string(sub.substr(0, 128)) + "'. Try COMMAND HELP.";
}

constexpr CommandSpec kCommandSubcommands[] = {
    {"COUNT", 2, kStale, 0, 0, 0, command_count, "server", "", "Number of commands."},
    {"INFO", -2, kStale, 0, 0, 0, command_info, "server", "[name ...]",
     "Redis 7's entry for each command named (a subcommand as container|sub), nil for an "
     "unknown one; every command's without names."},
    {"LIST", 2, kStale, 0, 0, 0, command_list, "server", "",
     "Every command's name, subcommands as container|sub."},
    {"DOCS", -2, kStale, 0, 0, 0, command_docs, "server", "[name ...]",
     "Summary, version and group of the commands named (unknown ones left out), or of all."},
};

}  // namespace

void add_server_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"INFO", -1, kStale, 0, 0, 0, info, "server", "[section [section ...]]",
     "Server information: server, clients, memory, persistence, stats, cpu, keyspace by "
     "default; models (the executor, a histogram of model runs' latencies, model_latency_us, and per-model run statistics) on request; ALL or EVERYTHING for all."},
    {"DBSIZE", 1, kReadOnly | kFast, 0, 0, 0, dbsize, "server", "", "Number of keys."},
    {"FLUSHDB", -1, kWrite, 0, 0, 0, flush, "server", "[ASYNC|SYNC]", "Removes every key."},
    {"FLUSHALL", -1, kWrite, 0, 0, 0, flush, "server", "[ASYNC|SYNC]",
     "Removes every key and every stream (SS.STREAM.DELETE)."},
    {"CONFIG", -2, kAdmin | kStale, 0, 0, 0, nullptr, "server", "subcommand [argument ...]",
     "Reads and changes a documented subset of settings.", nullptr, kConfigSubcommands},
    {"SAVE", 1, kAdmin, 0, 0, 0, save, "server", "",
     "Writes a snapshot to --dir (temporary file, fsync, rename)."},
    {"LASTSAVE", 1, kFast, 0, 0, 0, lastsave, "server", "",
     "Unix time of the last successful snapshot."},
    {"SHUTDOWN", -1, kAdmin | kStale, 0, 0, 0, shutdown, "server", "[NOSAVE|SAVE] [NOW] [FORCE]",
     "Saves a snapshot (unless NOSAVE) and stops the server. If the save fails it keeps "
     "running and replies an error; with FORCE it stops anyway, exiting with status 1."},
    {"TIME", 1, kFast, 0, 0, 0, time_command, "server", "", "Server time: seconds, microseconds."},
    {"COMMAND", -1, kStale, 0, 0, 0, command_all, "server", "[subcommand [argument ...]]",
     "Describes the command table.", nullptr,
     kCommandSubcommands, command_subcommand_error},
  });
}

}  // namespace slipstream::server
