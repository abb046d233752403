// Reading experiment files; see experiment.hpp and docs/launcher.md.
#include "launch/experiment.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "common/config_section.hpp"
#include "launch/password.hpp"

namespace slipstream::launch {
namespace {

// The interpreter `exe = "python3"` (or "python") runs: SLIPSTREAM_PYTHON when set, else the one
// this build was set up with (which has numpy, torch and the slipstream package), else python3
// on PATH. The first python3 on PATH may be another one, without them.
std::string python_interpreter() {
  if (const char* chosen = std::getenv("SLIPSTREAM_PYTHON"); chosen != nullptr && *chosen != '\0') {
    return chosen;
  }
#ifdef SLIPSTREAM_PYTHON_INTERPRETER
  if (::access(SLIPSTREAM_PYTHON_INTERPRETER, X_OK) == 0) return SLIPSTREAM_PYTHON_INTERPRETER;
#endif
  return "python3";
}


// Names become folder names, key prefixes and log file names: letters, digits, '_', '-', '.',
// not starting with '.', at most 64 characters.
void check_name(const ConfigSection& section, const toml::value* v, const std::string& name,
                const char* key) {
  const bool ok = !name.empty() && name.size() <= 64 && name[0] != '.' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                           c == '.';
                  });
  if (!ok) {
    const std::string what = "must be 1 to 64 letters, digits, '_', '-' or '.' (not starting with "
                             "'.'), got \"" + name + "\"";
    if (v != nullptr) section.fail(*v, key, what);
    throw ConfigError(section.origin() + ":" + std::to_string(section.line()) + ": [" +
                      section.name() + "] " + key + " " + what);
  }
}

std::string resolve(const std::string& base, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base) / path).lexically_normal().string();
}

void read_failure(ConfigSection& s, FailurePolicy& out);

// The keys applications and trainers share.
void read_process(ConfigSection& s, ProcessSpec& p, const std::string& base_dir,
                  bool has_password) {
  p.line = s.line();
  s.required("name", p.name);
  check_name(s, s.value("name"), p.name, "name");
  s.integer("ranks", p.ranks, 1, 100000);
  s.string_table("env", p.env);
  if (p.env.count(std::string(kPasswordVariable)) != 0 && has_password) {
    s.fail(*s.value("env"), "env",
           "may not set " + std::string(kPasswordVariable) +
               ": [experiment] sets the servers' password, and the launcher gives it to every "
               "process");
  }
  s.strings("after", p.after);
  s.string("server", p.server);
  read_failure(s, p.on_failure);
  s.number("timeout_seconds", p.timeout_seconds, [](double v) { return v >= 0; },
           "0 (none) or more");
  s.number("hang_seconds", p.hang_seconds, [](double v) { return v >= 0; }, "0 (never) or more");
  s.strings("copy", p.copy);
  s.strings("link", p.link);
  for (auto* files : {&p.copy, &p.link}) {
    for (std::string& f : *files) f = resolve(base_dir, f);
  }
}

void read_failure(ConfigSection& s, FailurePolicy& out) {
  s.choice<FailurePolicy::Kind>("on_failure", out.kind,
                                {{"abort", FailurePolicy::Kind::kAbort},
                                 {"restart", FailurePolicy::Kind::kRestart},
                                 {"continue", FailurePolicy::Kind::kContinue}});
  s.integer("restarts", out.restarts, 0, 1000);
  if (out.kind == FailurePolicy::Kind::kRestart && out.restarts == 0) out.restarts = 1;
  if (out.kind != FailurePolicy::Kind::kRestart && s.has("restarts") && out.restarts > 0) {
    s.fail(*s.value("restarts"), "restarts", "needs on_failure = \"restart\"");
  }
}

// The entries of `[[key]]` (or of a single `[key]` table), each with its line.
std::vector<const toml::value*> entries(const toml::value& root, const char* key,
                                        const std::string& origin) {
  std::vector<const toml::value*> out;
  if (!root.contains(key)) return out;
  const toml::value& v = root.at(key);
  if (v.is_table()) {
    out.push_back(&v);
  } else if (v.is_array()) {
    for (const toml::value& item : v.as_array()) {
      if (!item.is_table()) {
        throw ConfigError(config_where(origin, item) + "'" + key + "' must be tables ([[" + key +
                          "]])");
      }
      out.push_back(&item);
    }
  } else {
    throw ConfigError(config_where(origin, v) + "'" + key + "' must be a table ([" + key +
                      "] or [[" + key + "]])");
  }
  return out;
}

void read_ensemble(ConfigSection& app, EnsembleSpec& out) {
  const toml::value* v = app.value("ensemble");
  if (v == nullptr) return;
  if (!v->is_table()) app.fail(*v, "ensemble", "must be a table ([application.ensemble])");
  ConfigSection e(v, app.name() + ".ensemble", app.origin());
  e.integer("replicas", out.replicas, 1, 100000);
  e.integer("samples", out.samples, 1, 100000);
  std::int64_t seed = 0;
  e.integer("seed", seed, 0);
  out.seed = static_cast<std::uint64_t>(seed);
  const toml::value* grid = e.value("grid");
  const toml::value* random = e.value("random");
  const int kinds = (out.replicas > 0) + (grid != nullptr) + (random != nullptr || out.samples > 0);
  if (kinds != 1) {
    throw ConfigError(config_where(e.origin(), *v) + "[" + e.name() +
                      "] needs exactly one of replicas = N, grid = { PARAM = [values] } or "
                      "samples = N with random = { PARAM = { min, max } or { choices } }");
  }
  if (out.replicas > 0) out.kind = EnsembleSpec::Kind::kReplicas;
  if (grid != nullptr) {
    out.kind = EnsembleSpec::Kind::kGrid;
    if (!grid->is_table() || grid->as_table().empty()) {
      e.fail(*grid, "grid", "must be a table of parameters, each an array of values");
    }
    for (const auto& [param, values] : grid->as_table()) {
      if (!values.is_array() || values.as_array().empty()) {
        e.fail(values, ("grid." + param).c_str(), "must be a non-empty array of values");
      }
      std::vector<std::string> texts;
      for (const toml::value& item : values.as_array()) {
        texts.push_back(e.scalar_text(item, ("grid." + param).c_str()));
      }
      out.grid.emplace_back(param, std::move(texts));
    }
  }
  if (random != nullptr || out.samples > 0) {
    out.kind = EnsembleSpec::Kind::kRandom;
    if (random == nullptr || out.samples == 0) {
      throw ConfigError(config_where(e.origin(), *v) + "[" + e.name() +
                        "] random members need both samples = N and random = { ... }");
    }
    if (!random->is_table() || random->as_table().empty()) {
      e.fail(*random, "random", "must be a table of parameters");
    }
    for (const auto& [param, spec] : random->as_table()) {
      const std::string key = "random." + param;
      if (!spec.is_table()) e.fail(spec, key.c_str(), "must be { min = A, max = B } or { choices = [...] }");
      ConfigSection p(&spec, e.name() + "." + key, e.origin());
      EnsembleSpec::Random r;
      r.name = param;
      const toml::value* min = p.value("min");
      const toml::value* max = p.value("max");
      p.strings("choices", r.choices);
      if (!r.choices.empty() == (min != nullptr || max != nullptr) ||
          (r.choices.empty() && (min == nullptr || max == nullptr))) {
        e.fail(spec, key.c_str(), "must be { min = A, max = B } or { choices = [...] }");
      }
      if (min != nullptr) {
        p.number("min", r.min, [](double) { return true; }, "a number");
        p.number("max", r.max, [&](double m) { return m >= r.min; }, "at least min");
        r.integer = min->is_integer() && max->is_integer();
      }
      p.finish();
      out.random.push_back(std::move(r));
    }
  }
  e.finish();
}

// `password_file = "FILE"` or `password = "generate"` of [experiment]; a password written into
// the experiment file itself is refused.
void read_password(ConfigSection& s, Experiment& x) {
  std::string file, password;
  s.string("password_file", file);
  s.string("password", password);
  if (!password.empty() && password != "generate") {
    s.fail(*s.value("password"), "password",
           "must be \"generate\" (a new password for each run); to choose the password, write "
           "it into a file and set password_file = \"FILE\" instead");
  }
  if (!password.empty() && !file.empty()) {
    s.fail(*s.value("password"), "password", "and password_file exclude each other: set one");
  }
  if (s.has("password_file") && file.empty()) {
    s.fail(*s.value("password_file"), "password_file", "must name a file, got \"\"");
  }
  if (!file.empty()) {
    x.password.source = Experiment::Password::Source::kFile;
    x.password.file = resolve(x.base_dir, file);
  } else if (!password.empty()) {
    x.password.source = Experiment::Password::Source::kGenerate;
  }
}

}  // namespace

std::string fill_placeholders(std::string_view text, const std::map<std::string, std::string>& values,
                              const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') throw ConfigError(where + "a lone '}' in \"" + std::string(text) + "\" (write }})");
    if (c != '{') {
      out += c;
      continue;
    }
    const std::size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      throw ConfigError(where + "an unclosed '{' in \"" + std::string(text) + "\" (write {{)");
    }
    const std::string name(text.substr(i + 1, close - i - 1));
    const auto found = values.find(name);
    if (found == values.end()) {
      std::string known;
      for (const auto& [k, v] : values) known += (known.empty() ? "" : ", ") + k;
      throw ConfigError(where + "unknown placeholder {" + name + "} in \"" + std::string(text) +
                        "\" (known: " + known + ")");
    }
    out += found->second;
    i = close;
  }
  return out;
}

Experiment parse_experiment(std::string_view text, std::string_view origin,
                            const std::string& base_dir) {
  const std::string name(origin);
  const toml::value root = parse_config_text(std::string(text), name);
  static const std::set<std::string> kTables = {"experiment", "local", "slurm", "pbs", "server",
                                                "application", "trainer"};
  for (const auto& [key, value] : root.as_table()) {
    if (kTables.count(key) == 0) {
      throw ConfigError(config_where(name, value) + "'" + key +
                        "' is not a table of an experiment file (expected [experiment], [local], "
                        "[slurm], [pbs], [[server]], [[application]] or [[trainer]])");
    }
  }
  Experiment x;
  x.file = name;
  x.base_dir = base_dir;

  ConfigSection experiment(root.contains("experiment") ? &root.at("experiment") : nullptr,
                           "experiment", name);
  experiment.required("name", x.name);
  check_name(experiment, experiment.value("name"), x.name, "name");
  experiment.string("run_dir", x.run_dir);
  if (!x.run_dir.empty()) x.run_dir = resolve(base_dir, x.run_dir);
  experiment.choice<Experiment::Backend>("backend", x.backend,
                                         {{"local", Experiment::Backend::kLocal},
                                          {"slurm", Experiment::Backend::kSlurm},
                                          {"pbs", Experiment::Backend::kPbs}});
  auto positive = [](double v) { return v > 0; };
  experiment.number("stop_grace_seconds", x.stop_grace_seconds, positive, "more than 0");
  experiment.number("server_start_seconds", x.server_start_seconds, positive, "more than 0");
  experiment.number("heartbeat_seconds", x.heartbeat_seconds, positive, "more than 0");
  experiment.number("status_every_seconds", x.status_every_seconds,
                    [](double v) { return v >= 0; }, "0 (only changes) or more");
  experiment.number("metrics_every_seconds", x.metrics_every_seconds,
                    [](double v) { return v >= 0; }, "0 (off) or more");
  experiment.boolean("report", x.report);
  read_password(experiment, x);
  experiment.finish();

  ConfigSection local(root.contains("local") ? &root.at("local") : nullptr, "local", name);
  local.string("mpirun", x.mpirun);
  local.strings("mpirun_args", x.mpirun_args);
  local.finish();

  ConfigSection slurm(root.contains("slurm") ? &root.at("slurm") : nullptr, "slurm", name);
  slurm.integer("nodes", x.slurm.nodes, 1, 100000);
  slurm.string("time", x.slurm.time);
  slurm.string("partition", x.slurm.partition);
  slurm.string("account", x.slurm.account);
  slurm.strings("sbatch_args", x.slurm.sbatch_args);
  slurm.strings("srun_args", x.slurm.srun_args);
  slurm.finish();

  ConfigSection pbs(root.contains("pbs") ? &root.at("pbs") : nullptr, "pbs", name);
  pbs.string("resources", x.pbs.resources);
  pbs.string("walltime", x.pbs.walltime);
  pbs.string("queue", x.pbs.queue);
  pbs.string("account", x.pbs.account);
  pbs.strings("qsub_args", x.pbs.qsub_args);
  pbs.string("mpiexec", x.pbs.mpiexec);
  pbs.strings("mpiexec_args", x.pbs.mpiexec_args);
  pbs.finish();

  const bool has_password = x.password.source != Experiment::Password::Source::kNone;
  std::set<std::string> names;  // every process name, so that none is used twice
  auto unique = [&](ConfigSection& s, const std::string& n) {
    if (!names.insert(n).second) {
      s.fail(*s.value("name"), "name", "\"" + n + "\" is used twice in this experiment");
    }
  };

  for (const toml::value* entry : entries(root, "server", name)) {
    ConfigSection s(entry, "server", name);
    ServerSpec spec;
    spec.line = s.line();
    s.string("name", spec.name);
    check_name(s, s.value("name"), spec.name, "name");
    s.choice<ServerSpec::Mode>("mode", spec.mode,
                               {{"standalone", ServerSpec::Mode::kStandalone},
                                {"cluster", ServerSpec::Mode::kCluster},
                                {"colocated", ServerSpec::Mode::kColocated}});
    s.integer("shards", spec.shards, 1, 64);
    if (spec.mode != ServerSpec::Mode::kCluster && spec.shards != 1) {
      s.fail(*s.value("shards"), "shards", "needs mode = \"cluster\"");
    }
    if (spec.mode == ServerSpec::Mode::kCluster && !s.has("shards")) spec.shards = 3;
    s.strings("options", spec.options);
    for (const std::string& option : spec.options) {
      for (const char* owned : {"--port", "--dir", "--cluster-nodes", "--cluster-node-index",
                                "--unixsocket"}) {
        if (option == owned || option.rfind(std::string(owned) + "=", 0) == 0) {
          s.fail(*s.value("options"), "options",
                 std::string("may not set ") + owned + ": the launcher chooses it");
        }
      }
    }
    if (x.password.source != Experiment::Password::Source::kNone) {
      for (const std::string& option : spec.options) {
        for (const char* owned : {"--requirepass", "--requirepass-file"}) {
          if (option == owned || option.rfind(std::string(owned) + "=", 0) == 0) {
            s.fail(*s.value("options"), "options",
                   std::string("may not set ") + owned +
                       ": [experiment] sets the servers' password");
          }
        }
      }
    }
    s.boolean("snapshot_at_end", spec.snapshot_at_end);
    s.finish();
    unique(s, spec.name);
    x.servers.push_back(std::move(spec));
  }

  for (const toml::value* entry : entries(root, "application", name)) {
    ConfigSection s(entry, "application", name);
    ApplicationSpec app;
    read_process(s, app, base_dir, has_password);
    s.required("exe", app.exe);
    if (app.exe.find('/') != std::string::npos) app.exe = resolve(base_dir, app.exe);
    if (app.exe == "python3" || app.exe == "python") app.exe = python_interpreter();
    s.strings("args", app.args);
    s.string_table("params", app.params);
    s.string("workdir", app.workdir);
    app.workdir = resolve(base_dir, app.workdir);
    s.strings("configure", app.configure);
    for (std::string& f : app.configure) f = resolve(base_dir, f);
    read_ensemble(s, app.ensemble);
    app.key_prefix = app.ensemble.kind != EnsembleSpec::Kind::kNone;
    s.boolean("key_prefix", app.key_prefix);
    s.strings("reads", app.reads);
    s.finish();
    if (!app.reads.empty() && !app.key_prefix) {
      s.fail(*s.value("reads"), "reads", "needs key_prefix = true (reads are prefixes)");
    }
    unique(s, app.name);
    x.applications.push_back(std::move(app));
  }

  for (const toml::value* entry : entries(root, "trainer", name)) {
    ConfigSection s(entry, "trainer", name);
    TrainerSpec t;
    read_process(s, t, base_dir, has_password);
    s.required("config", t.config);
    t.config = resolve(base_dir, t.config);
    s.finish();
    unique(s, t.name);
    x.trainers.push_back(std::move(t));
  }

  if (x.applications.empty() && x.trainers.empty()) {
    throw ConfigError(name + ": the experiment starts nothing: add an [[application]] or a "
                      "[[trainer]]");
  }
  // Servers named by applications and trainers exist; with several, each says which.
  auto check_server = [&](std::string& server, int line, const std::string& who) {
    const std::string where = name + ":" + std::to_string(line) + ": " + who + " ";
    if (server.empty()) {
      if (x.servers.size() > 1) {
        throw ConfigError(where + "must name its server (server = \"...\"): the experiment has " +
                          std::to_string(x.servers.size()));
      }
      if (x.servers.size() == 1) server = x.servers.front().name;
      return;
    }
    const bool found = std::any_of(x.servers.begin(), x.servers.end(),
                                   [&](const ServerSpec& s) { return s.name == server; });
    if (!found) throw ConfigError(where + "names server \"" + server + "\", which is not declared");
  };
  for (ApplicationSpec& app : x.applications) check_server(app.server, app.line, app.name);
  for (TrainerSpec& t : x.trainers) {
    if (x.servers.empty()) {
      throw ConfigError(name + ":" + std::to_string(t.line) + ": trainer " + t.name +
                        " needs a server: add a [[server]]");
    }
    check_server(t.server, t.line, t.name);
  }
  return x;
}

Experiment load_experiment(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read experiment file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string base = std::filesystem::path(path).parent_path().string();
  base = std::filesystem::absolute(base.empty() ? "." : base).lexically_normal().string();
  return parse_experiment(text.str(), path, base);
}

}  // namespace slipstream::launch
