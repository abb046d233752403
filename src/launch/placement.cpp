// Placement: experiment -> processes; see placement.hpp.
#include "launch/placement.hpp"

#include "launch/password.hpp"
#include "launch/run_program.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string_view>

namespace slipstream::launch {
namespace {

// A 64-bit generator with a fixed definition (SplitMix64), so a seed gives the same members on
// every platform (std:: distributions are not specified bit for bit).
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  std::uint64_t state_;
};

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

// The members of an application: each one's parameters (the fixed ones and its own).
std::vector<std::map<std::string, std::string>> member_params(const ApplicationSpec& app) {
  const EnsembleSpec& e = app.ensemble;
  std::vector<std::map<std::string, std::string>> members;
  switch (e.kind) {
    case EnsembleSpec::Kind::kNone:
      members.push_back(app.params);
      break;
    case EnsembleSpec::Kind::kReplicas:
      members.assign(static_cast<std::size_t>(e.replicas), app.params);
      break;
    case EnsembleSpec::Kind::kGrid: {
      // Every combination; the first parameter (by name) changes slowest.
      auto grid = e.grid;
      std::sort(grid.begin(), grid.end());
      std::size_t count = 1;
      for (const auto& [name, values] : grid) count *= values.size();
      for (std::size_t m = 0; m < count; ++m) {
        auto params = app.params;
        std::size_t rest = m;
        for (auto it = grid.rbegin(); it != grid.rend(); ++it) {
          params[it->first] = it->second[rest % it->second.size()];
          rest /= it->second.size();
        }
        members.push_back(std::move(params));
      }
      break;
    }
    case EnsembleSpec::Kind::kRandom: {
      auto random = e.random;
      std::sort(random.begin(), random.end(),
                [](const auto& a, const auto& b) { return a.name < b.name; });
      Generator generator(e.seed);
      for (int m = 0; m < e.samples; ++m) {
        auto params = app.params;
        for (const auto& r : random) {
          if (!r.choices.empty()) {
            params[r.name] = r.choices[generator.next() % r.choices.size()];
          } else if (r.integer) {
            const auto span = static_cast<std::uint64_t>(r.max - r.min) + 1;
            params[r.name] = std::to_string(static_cast<std::int64_t>(r.min) +
                                            static_cast<std::int64_t>(generator.next() % span));
          } else {
            params[r.name] = number_text(r.min + generator.uniform() * (r.max - r.min));
          }
        }
        members.push_back(std::move(params));
      }
      break;
    }
  }
  return members;
}

// The command as the back-end starts it: under Slurm every process is a job step of the
// experiment's allocation (srun; --overlap so that steps share the allocation's CPUs, as the
// processes of one node do); locally, MPI programs go through mpirun, under PBS through mpiexec
// (whose environment forwarding is the site's MPI's: mpiexec_args can add it).
std::vector<std::string> with_launcher(const Experiment& x, int ranks,
                                       const std::vector<std::string>& exported,
                                       std::vector<std::string> command,
                                       const std::string& node, bool several_nodes) {
  if (x.backend == Experiment::Backend::kSlurm) {
    std::vector<std::string> argv = {"srun", "-n", std::to_string(ranks), "--overlap",
                                     "--overcommit", "--export=ALL", "--kill-on-bad-exit=1"};
    if (several_nodes) argv.insert(argv.end(), {"-N", "1", "-w", node});
    argv.insert(argv.end(), x.slurm.srun_args.begin(), x.slurm.srun_args.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  if (ranks <= 1) return command;
  if (x.backend == Experiment::Backend::kPbs) {
    std::vector<std::string> argv = {x.pbs.mpiexec, "-n", std::to_string(ranks)};
    argv.insert(argv.end(), x.pbs.mpiexec_args.begin(), x.pbs.mpiexec_args.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  std::vector<std::string> argv = {x.mpirun, "-n", std::to_string(ranks)};
  argv.insert(argv.end(), x.mpirun_args.begin(), x.mpirun_args.end());
  for (const std::string& name : exported) {
    argv.push_back("-x");
    argv.push_back(name);
  }
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Its server, and what the back-end watches for: failures, timeouts, hangs.
void take_watch_settings(const ProcessSpec& spec, ProcessPlan& p) {
  p.server = spec.server;
  p.on_failure = spec.on_failure;
  p.timeout_seconds = spec.timeout_seconds;
  p.hang_seconds = spec.hang_seconds;
}

std::string quoted(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\"'$\\`;&|<>(){}*?!#~") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Passwords never reach the plan, which is printed (--dry-run) and kept (plan.txt): the value of
// a server password option in any command (`--requirepass VALUE`, `--requirepass=VALUE`), of an
// environment variable whose name holds PASSWORD (SLIPSTREAM_PASSWORD), and a parameter with one
// of those values are shown as kHidden.
constexpr std::string_view kHidden = "***";
constexpr std::string_view kPasswordOption = "--requirepass";

bool is_password_variable(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper.find("PASSWORD") != std::string::npos;
}

// The command as the plan shows it: each word after a blank, quoted for the shell, passwords
// hidden (and added to `secrets`).
std::string shown_command(const std::vector<std::string>& argv, std::set<std::string>& secrets) {
  const std::string with_value = std::string(kPasswordOption) + "=";
  std::string out;
  bool password_next = false;
  for (const std::string& word : argv) {
    out += ' ';
    if (password_next) {
      secrets.insert(word);
      out += kHidden;
      password_next = false;
    } else if (word.rfind(with_value, 0) == 0) {
      secrets.insert(word.substr(with_value.size()));
      out += with_value;
      out += kHidden;
    } else {
      password_next = word == kPasswordOption;
      out += quoted(word);
    }
  }
  return out;
}

}  // namespace

const ProcessPlan* Plan::find(const std::string& name) const {
  for (const ProcessPlan& p : processes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<const ProcessPlan*> Plan::shards(const std::string& server) const {
  std::vector<const ProcessPlan*> out;
  for (const ProcessPlan& p : processes) {
    if (p.kind == ProcessPlan::Kind::kServer && p.group == server) out.push_back(&p);
  }
  return out;
}

Plan make_plan(const Experiment& x, const std::string& slipstream_binary,
               const std::string& run_dir, const std::vector<std::string>& nodes) {
  if (nodes.empty()) throw ConfigError(x.file + ": no node to place the processes on");
  Plan plan;
  plan.experiment = x.name;
  plan.run_dir = run_dir;
  plan.nodes = nodes;
  const bool several = nodes.size() > 1;
  // Servers on several nodes listen on every interface, where a server without a password
  // refuses every peer (protected mode): without one of the experiment's, the run makes one.
  plan.password_generated = x.password.source == Experiment::Password::Source::kNone &&
                            several && !x.servers.empty();
  if (x.password.source != Experiment::Password::Source::kNone || plan.password_generated) {
    plan.password_file = password_path(run_dir);
  }
  const bool password = !plan.password_file.empty();
  std::size_t next_node = 0;  // members and trainers go to the nodes in turn
  std::map<std::string, std::vector<std::string>> groups;  // group -> its process names
  std::set<std::string> names;
  auto add = [&](ProcessPlan p) {
    if (!names.insert(p.name).second) {
      throw ConfigError(x.file + ": two processes would be named \"" + p.name +
                        "\" (an ensemble member's name is APPLICATION_INDEX): rename one");
    }
    groups[p.group].push_back(p.name);
    plan.processes.push_back(std::move(p));
  };

  for (const ServerSpec& s : x.servers) {
    // A colocated server is one independent shard on every node.
    const bool colocated = s.mode == ServerSpec::Mode::kColocated;
    const int shards = colocated ? static_cast<int>(nodes.size()) : s.shards;
    for (int k = 0; k < shards; ++k) {
      ProcessPlan p;
      p.kind = ProcessPlan::Kind::kServer;
      p.group = s.name;
      p.index = k;
      p.name = shards == 1 ? s.name : s.name + "_" + std::to_string(k);
      p.node = nodes[static_cast<std::size_t>(k) % nodes.size()];
      std::vector<std::string> command = {slipstream_binary, "server"};
      command.insert(command.end(), s.options.begin(), s.options.end());
      // The file, never the password: a command line is visible to every user (ps).
      if (password) command.insert(command.end(), {"--requirepass-file", plan.password_file});
      p.argv = with_launcher(x, 1, {}, std::move(command), p.node, several);
      p.run_dir = run_dir + "/" + p.name;
      p.workdir = p.run_dir;
      // sockaddr_un holds 108 bytes; a longer path falls back to TCP.
      const std::string socket = p.run_dir + "/" + p.name + ".sock";
      if (s.mode == ServerSpec::Mode::kColocated && socket.size() < 100) p.unix_socket = socket;
      add(std::move(p));
    }
  }

  for (const ApplicationSpec& app : x.applications) {
    const auto members = member_params(app);
    for (std::size_t m = 0; m < members.size(); ++m) {
      ProcessPlan p;
      p.kind = ProcessPlan::Kind::kApplication;
      p.group = app.name;
      p.index = static_cast<int>(m);
      p.name = app.ensemble.kind == EnsembleSpec::Kind::kNone ? app.name
                                                              : app.name + "_" + std::to_string(m);
      p.ranks = app.ranks;
      p.run_dir = run_dir + "/" + p.name;
      p.params = members[m];
      for (const auto& [k, v] : std::map<std::string, std::string>{
               {"name", p.name}, {"index", std::to_string(m)}, {"run_dir", p.run_dir},
               {"experiment_dir", run_dir}, {"ranks", std::to_string(app.ranks)}}) {
        p.params.emplace(k, v);  // a parameter of the same name wins
      }
      const std::string where =
          x.file + ":" + std::to_string(app.line) + ": application " + app.name + ", member " +
          p.name + ": ";
      p.workdir = app.workdir.empty() ? p.run_dir : fill_placeholders(app.workdir, p.params, where);
      std::vector<std::string> command = {fill_placeholders(app.exe, p.params, where)};
      for (const std::string& arg : app.args) command.push_back(fill_placeholders(arg, p.params, where));
      for (const auto& [k, v] : app.env) {
        p.env[k] = fill_placeholders(v, p.params, where);
        p.exported.push_back(k);
      }
      if (app.key_prefix) {
        p.env["SSKEYOUT"] = p.name;
        p.env["SSKEYIN"] = p.name;  // the others it reads are added below, once all are known
        p.exported.push_back("SSKEYOUT");
        p.exported.push_back("SSKEYIN");
      }
      if (!app.server.empty()) p.exported.push_back("SSDB");
      if (password) p.exported.push_back(std::string(kPasswordVariable));
      p.node = nodes[next_node++ % nodes.size()];
      p.argv = with_launcher(x, app.ranks, p.exported, std::move(command), p.node, several);
      p.copy = app.copy;
      p.link = app.link;
      p.configure = app.configure;
      take_watch_settings(app, p);
      add(std::move(p));
    }
  }

  for (const TrainerSpec& t : x.trainers) {
    ProcessPlan p;
    p.kind = ProcessPlan::Kind::kTrainer;
    p.group = t.name;
    p.name = t.name;
    p.ranks = t.ranks;
    p.run_dir = run_dir + "/" + t.name;
    p.workdir = p.run_dir;
    for (const auto& [k, v] : t.env) {
      p.env[k] = v;
      p.exported.push_back(k);
    }
    p.exported.push_back("SSDB");
    if (password) p.exported.push_back(std::string(kPasswordVariable));
    // The config runs from the trainer's folder (see TrainerSpec::config).
    p.copy = t.copy;
    p.copy.push_back(t.config);
    p.link = t.link;
    const std::string config = p.run_dir + "/" + std::filesystem::path(t.config).filename().string();
    p.node = nodes[next_node++ % nodes.size()];
    p.argv = with_launcher(x, t.ranks, p.exported, {slipstream_binary, "train", config}, p.node,
                           several);
    take_watch_settings(t, p);
    add(std::move(p));
  }

  // Processes of a colocated server's group talk to the shard on their node.
  for (ProcessPlan& p : plan.processes) {
    if (p.kind == ProcessPlan::Kind::kServer || p.server.empty()) continue;
    const bool colocated = std::any_of(x.servers.begin(), x.servers.end(), [&](const auto& s) {
      return s.name == p.server && s.mode == ServerSpec::Mode::kColocated;
    });
    for (const ProcessPlan& shard : plan.processes) {
      if (colocated && shard.kind == ProcessPlan::Kind::kServer && shard.group == p.server &&
          shard.node == p.node) {
        p.server_shard = shard.name;
      }
    }
  }

  // Names in `after` and `reads`: a group stands for all its processes.
  auto expand = [&](const std::string& name, int line, const char* key,
                    const std::string& who) -> std::vector<std::string> {
    if (groups.count(name)) return groups[name];
    if (names.count(name)) return {name};
    throw ConfigError(x.file + ":" + std::to_string(line) + ": " + who + " " + key + " \"" + name +
                      "\", which is neither an application, a member nor a trainer");
  };
  auto lookup = [&](const std::string& name) {
    return std::find_if(plan.processes.begin(), plan.processes.end(),
                        [&](const ProcessPlan& p) { return p.name == name; });
  };
  auto set_after = [&](const std::string& group, const std::vector<std::string>& after, int line) {
    for (const std::string& process : groups[group]) {
      auto p = lookup(process);
      for (const std::string& a : after) {
        for (const std::string& dep : expand(a, line, "waits for", group)) {
          if (lookup(dep)->kind == ProcessPlan::Kind::kServer) {
            throw ConfigError(x.file + ":" + std::to_string(line) + ": " + group +
                              " waits for server " + dep +
                              ": servers run to the end (every process waits for its server "
                              "to answer before it starts)");
          }
          if (dep == p->name) {
            throw ConfigError(x.file + ":" + std::to_string(line) + ": " + group +
                              " waits for itself");
          }
          p->after.push_back(dep);
        }
      }
    }
  };
  for (const ApplicationSpec& app : x.applications) {
    set_after(app.name, app.after, app.line);
    for (const std::string& process : groups[app.name]) {
      auto p = lookup(process);
      for (const std::string& r : app.reads) {
        for (const std::string& source : expand(r, app.line, "reads", app.name)) {
          auto s = lookup(source);
          if (s->kind != ProcessPlan::Kind::kApplication || s->env.count("SSKEYOUT") == 0) {
            throw ConfigError(x.file + ":" + std::to_string(app.line) + ": " + app.name +
                              " reads " + source + ", which does not write under a key prefix "
                              "(key_prefix = true on it)");
          }
          if (source != p->name) p->env["SSKEYIN"] += "," + source;
        }
      }
    }
  }
  for (const TrainerSpec& t : x.trainers) set_after(t.name, t.after, t.line);

  // No cycles: every process can start once those before it have ended.
  std::map<std::string, int> state;  // 1: being visited, 2: done
  std::function<void(const ProcessPlan&, std::vector<std::string>&)> visit =
      [&](const ProcessPlan& p, std::vector<std::string>& path) {
        if (state[p.name] == 2) return;
        path.push_back(p.name);
        if (state[p.name] == 1) {
          std::string cycle;
          for (const auto& n : path) cycle += (cycle.empty() ? "" : " -> ") + n;
          throw ConfigError(x.file + ": the processes wait for each other in a circle: " + cycle);
        }
        state[p.name] = 1;
        for (const std::string& dep : p.after) visit(*lookup(dep), path);
        state[p.name] = 2;
        path.pop_back();
      };
  for (const ProcessPlan& p : plan.processes) {
    std::vector<std::string> path;
    visit(p, path);
  }
  return plan;
}

std::string describe(const Plan& plan) {
  std::ostringstream out;
  std::size_t servers = 0, others = 0;
  for (const ProcessPlan& p : plan.processes) {
    (p.kind == ProcessPlan::Kind::kServer ? servers : others) += 1;
  }
  out << "experiment " << plan.experiment << ": " << servers << " server process"
      << (servers == 1 ? "" : "es") << ", " << others << " other process" << (others == 1 ? "" : "es")
      << "\nrun directory " << plan.run_dir << "\n";
  if (plan.password_generated) {
    out << "password: generated for the run (its servers span " << plan.nodes.size()
        << " nodes and the experiment sets none), in " << quoted(plan.password_file) << "\n";
  }
  static const char* kKinds[] = {"server", "application", "trainer"};
  for (const ProcessPlan& p : plan.processes) {
    std::set<std::string> secrets;  // the passwords hidden in this process's lines
    out << "\n" << kKinds[static_cast<int>(p.kind)] << " " << p.name;
    if (p.name != p.group) out << " (" << p.group << " #" << p.index << ")";
    out << "\n  node " << p.node << ", " << p.ranks << " rank" << (p.ranks == 1 ? "" : "s")
        << ", runs in " << p.workdir << "\n  command:" << shown_command(p.argv, secrets);
    if (p.kind == ProcessPlan::Kind::kServer) {
      out << " --port <free port, picked at start> --dir " << quoted(p.run_dir);
      if (!p.unix_socket.empty()) out << " --unixsocket " << quoted(p.unix_socket);
      const auto shards = plan.shards(p.group);
      if (shards.size() > 1) {
        out << " --cluster-nodes <the " << shards.size() << " shards> --cluster-node-index "
            << p.index;
      }
    }
    out << "\n";
    if (!p.server_shard.empty()) {
      out << "  SSDB=<the address of " << p.server_shard << ", the shard of " << p.server
          << " on its node>\n";
    } else if (!p.server.empty()) {
      out << "  SSDB=<the addresses of server " << p.server << ">\n";
    }
    if (!plan.password_file.empty() && p.kind != ProcessPlan::Kind::kServer) {
      out << "  " << kPasswordVariable << "=" << kHidden << " (the run's password, from "
          << quoted(plan.password_file) << ")\n";
    }
    for (const auto& [k, v] : p.env) {
      if (is_password_variable(k)) {
        secrets.insert(v);
        out << "  " << k << "=" << kHidden << "\n";
      } else {
        out << "  " << k << "=" << quoted(v) << "\n";
      }
    }
    if (!p.after.empty()) {
      out << "  starts after:";
      for (const std::string& a : p.after) out << " " << a;
      out << "\n";
    }
    const auto* params = &p.params;
    std::string own;
    for (const auto& [k, v] : *params) {
      if (k != "name" && k != "index" && k != "run_dir" && k != "experiment_dir" && k != "ranks") {
        own += " " + k + "=" + (secrets.count(v) ? std::string(kHidden) : quoted(v));
      }
    }
    if (!own.empty()) out << "  parameters:" << own << "\n";
    static const char* kPolicies[] = {"abort", "restart", "continue"};
    if (p.kind != ProcessPlan::Kind::kServer) {
      out << "  on failure: " << kPolicies[static_cast<int>(p.on_failure.kind)];
      if (p.on_failure.kind == FailurePolicy::Kind::kRestart) {
        out << " (up to " << p.on_failure.restarts << " times)";
      }
      out << "\n";
    }
  }
  return out.str();
}

std::vector<std::string> plan_nodes(const Experiment& x) {
  if (x.backend != Experiment::Backend::kSlurm) return {"localhost"};
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (std::getenv("SLURM_JOB_ID") != nullptr && list != nullptr) {
    const auto [status, text] = run_program({"scontrol", "show", "hostnames", list});
    std::vector<std::string> nodes;
    std::istringstream in(text);
    for (std::string node; in >> node;) nodes.push_back(node);
    if (status != 0 || nodes.empty()) {
      throw std::runtime_error(std::string("cannot list the job's nodes (scontrol show hostnames ") +
                               list + ")");
    }
    return nodes;
  }
  std::vector<std::string> nodes;
  for (int k = 0; k < x.slurm.nodes; ++k) nodes.push_back("node" + std::to_string(k));
  return nodes;
}

}  // namespace slipstream::launch
