// The launcher's experiment files and placement: defaults, ensembles (grid, random, replicas),
// placeholders, key prefixes, dependencies, and errors that name the file and the line.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "launch/batch_backend.hpp"
#include "launch/experiment.hpp"
#include "launch/placement.hpp"

namespace slipstream::launch {
namespace {

Experiment parse(const std::string& text) { return parse_experiment(text, "x.toml", "/base"); }

std::string error_of(const std::string& text) {
  try {
    const Experiment x = parse(text);
    make_plan(x, "/bin/slipstream", "/runs/x");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kServer = R"(
[experiment]
name = "demo"
[[server]]
name = "db"
)";

TEST(Experiment, DefaultsAndAStandaloneServer) {
  const Experiment x = parse(std::string(kServer) + R"(
[[application]]
name = "sim"
exe = "bin/sim"
)");
  EXPECT_EQ(x.name, "demo");
  EXPECT_EQ(x.backend, Experiment::Backend::kLocal);
  ASSERT_EQ(x.servers.size(), 1u);
  EXPECT_EQ(x.servers[0].mode, ServerSpec::Mode::kStandalone);
  ASSERT_EQ(x.applications.size(), 1u);
  const ApplicationSpec& app = x.applications[0];
  EXPECT_EQ(app.exe, "/base/bin/sim");  // relative to the file
  EXPECT_EQ(app.server, "db");          // the only server
  EXPECT_FALSE(app.key_prefix);         // not an ensemble
  EXPECT_EQ(app.on_failure.kind, FailurePolicy::Kind::kAbort);

  const Plan plan = make_plan(x, "/bin/slipstream", "/runs/demo");
  ASSERT_EQ(plan.processes.size(), 2u);
  EXPECT_EQ(plan.processes[0].kind, ProcessPlan::Kind::kServer);
  EXPECT_EQ(plan.processes[0].argv, (std::vector<std::string>{"/bin/slipstream", "server"}));
  EXPECT_EQ(plan.processes[1].name, "sim");
  EXPECT_EQ(plan.processes[1].run_dir, "/runs/demo/sim");
  EXPECT_EQ(plan.processes[1].workdir, "/runs/demo/sim");
  EXPECT_EQ(plan.processes[1].env.count("SSKEYOUT"), 0u);
}

TEST(Experiment, AGridGivesEveryCombinationWithItsOwnPrefix) {
  const Experiment x = parse(std::string(kServer) + R"(
[[application]]
name = "sim"
exe = "sim"
args = ["--nu", "{nu}", "--n", "{n}", "--out", "{name}.dat", "{{literal}}"]
params = { fixed = "yes" }
env = { NU = "{nu}" }
[application.ensemble]
grid = { nu = [0.1, 0.2], n = [32, 64, 128] }
)");
  const Plan plan = make_plan(x, "/bin/slipstream", "/runs/demo");
  ASSERT_EQ(plan.processes.size(), 7u);
  const ProcessPlan& m = plan.processes[1 + 4];  // n is first by name: n=128 for members 4, 5
  EXPECT_EQ(m.name, "sim_4");
  EXPECT_EQ(m.argv, (std::vector<std::string>{"sim", "--nu", "0.1", "--n", "128", "--out",
                                              "sim_4.dat", "{literal}"}));
  EXPECT_EQ(m.env.at("NU"), "0.1");
  EXPECT_EQ(m.env.at("SSKEYOUT"), "sim_4");
  EXPECT_EQ(m.env.at("SSKEYIN"), "sim_4");
  EXPECT_EQ(m.params.at("fixed"), "yes");
  EXPECT_EQ(plan.processes[6].params.at("nu"), "0.2");
}

TEST(Experiment, RandomMembersRepeatWithTheirSeedAndStayInRange) {
  const std::string text = std::string(kServer) + R"(
[[application]]
name = "sim"
exe = "sim"
[application.ensemble]
samples = 50
seed = 11
random = { steps = { min = 10, max = 12 }, lr = { min = 0.5, max = 1.0 }, kind = { choices = ["a", "b"] } }
)";
  const Plan a = make_plan(parse(text), "s", "/r");
  const Plan b = make_plan(parse(text), "s", "/r");
  ASSERT_EQ(a.processes.size(), 51u);
  std::set<std::string> steps, kinds;
  for (std::size_t k = 1; k < a.processes.size(); ++k) {
    EXPECT_EQ(a.processes[k].params, b.processes[k].params);
    steps.insert(a.processes[k].params.at("steps"));
    kinds.insert(a.processes[k].params.at("kind"));
    const double lr = std::stod(a.processes[k].params.at("lr"));
    EXPECT_GE(lr, 0.5);
    EXPECT_LE(lr, 1.0);
  }
  EXPECT_EQ(steps, (std::set<std::string>{"10", "11", "12"}));
  EXPECT_EQ(kinds, (std::set<std::string>{"a", "b"}));
}

TEST(Experiment, ReadsAndAfterExpandGroupsAndMpiRanksUseMpirun) {
  const Experiment x = parse(std::string(kServer) + R"(
[local]
mpirun_args = ["--oversubscribe"]
[[application]]
name = "sim"
exe = "sim"
ranks = 4
[application.ensemble]
replicas = 2
[[application]]
name = "post"
exe = "post"
key_prefix = true
reads = ["sim"]
after = ["sim_1"]
[[trainer]]
name = "learn"
config = "train.toml"
ranks = 2
after = ["post"]
)");
  const Plan plan = make_plan(x, "/bin/slipstream", "/runs/demo");
  const ProcessPlan* post = plan.find("post");
  ASSERT_NE(post, nullptr);
  EXPECT_EQ(post->env.at("SSKEYIN"), "post,sim_0,sim_1");
  EXPECT_EQ(post->after, (std::vector<std::string>{"sim_1"}));
  const ProcessPlan* sim = plan.find("sim_0");
  EXPECT_EQ(sim->argv, (std::vector<std::string>{"mpirun", "-n", "4", "--oversubscribe", "-x",
                                                 "SSKEYOUT", "-x", "SSKEYIN", "-x", "SSDB",
                                                 "sim"}));
  const ProcessPlan* learn = plan.find("learn");
  EXPECT_EQ(learn->argv.back(), "/runs/demo/learn/train.toml");  // copied into its folder
  EXPECT_EQ(learn->copy, (std::vector<std::string>{"/base/train.toml"}));
  EXPECT_EQ(learn->server, "db");
  const std::string text = describe(plan);
  EXPECT_NE(text.find("application sim_1 (sim #1)"), std::string::npos) << text;
  EXPECT_NE(text.find("starts after: sim_1"), std::string::npos) << text;
  EXPECT_NE(text.find("--port <free port, picked at start>"), std::string::npos) << text;
}

TEST(Experiment, AClusterHasOneProcessPerShard) {
  const Experiment x = parse(R"(
[experiment]
name = "c"
[[server]]
name = "db"
mode = "cluster"
shards = 3
options = ["--threads", "1"]
[[application]]
name = "sim"
exe = "sim"
)");
  const Plan plan = make_plan(x, "s", "/r");
  ASSERT_EQ(plan.shards("db").size(), 3u);
  EXPECT_EQ(plan.processes[2].name, "db_2");
  EXPECT_EQ(plan.processes[2].index, 2);
}

TEST(Experiment, ErrorsNameTheFileTheLineAndTheKey) {
  const std::string app = "[experiment]\nname = \"x\"\n[[application]]\nname = \"a\"\nexe = \"e\"\n";
  EXPECT_EQ(error_of(app + "ranks = 0\n"), "x.toml:6: [application] ranks must be from 1 to 100000, got 0");
  EXPECT_EQ(error_of(app + "typo = 1\n").rfind("x.toml:6: [application] typo is not an option", 0), 0u);
  EXPECT_NE(error_of(app + "args = [\"{missing}\"]\n").find("unknown placeholder {missing}"),
            std::string::npos);
  EXPECT_NE(error_of(app + "args = [\"{open\"]\n").find("an unclosed '{'"), std::string::npos);
  EXPECT_NE(error_of(app + "after = [\"nobody\"]\n").find("waits for \"nobody\", which is neither"),
            std::string::npos);
  EXPECT_NE(error_of(app + "after = [\"a\"]\n").find("waits for itself"), std::string::npos);
  EXPECT_NE(error_of(app + "reads = [\"a\"]\n").find("reads needs key_prefix = true"),
            std::string::npos);
  EXPECT_NE(error_of(app + "restarts = 2\n").find("restarts needs on_failure = \"restart\""),
            std::string::npos);
  EXPECT_NE(error_of(app + "[application.ensemble]\nreplicas = 2\ngrid = { a = [1] }\n")
                .find("needs exactly one of"),
            std::string::npos);
  EXPECT_NE(error_of(app + "[[application]]\nname = \"a\"\nexe = \"f\"\n").find("x.toml:7:"),
            std::string::npos);
  EXPECT_NE(error_of("[experiment]\nname = \"bad/name\"\n").find("must be 1 to 64 letters"),
            std::string::npos);
  EXPECT_NE(error_of("[experiment]\nname = \"x\"\n").find("starts nothing"), std::string::npos);
  EXPECT_NE(error_of("[experiment]\nname = \"x\"\n[servers]\n").find("'servers' is not a table"),
            std::string::npos);
  EXPECT_NE(error_of("[experiment]\nname = \"x\"\n[[server]]\noptions = [\"--port\", \"1\"]\n" +
                     app.substr(std::string("[experiment]\nname = \"x\"\n").size()))
                .find("may not set --port"),
            std::string::npos);
  EXPECT_NE(error_of("[experiment]\nname = \"x\"\n[[trainer]]\nname = \"t\"\nconfig = \"c\"\n")
                .find("needs a server"),
            std::string::npos);
  EXPECT_NE(error_of(app + "after = [\"b\"]\n[[application]]\nname = \"b\"\nexe = \"e\"\nafter = "
                           "[\"a\"]\n")
                .find("in a circle: a -> b -> a"),
            std::string::npos);
}

TEST(Placeholders, FillEscapeAndRefuse) {
  const std::map<std::string, std::string> v = {{"a", "1"}, {"bb", "two"}};
  EXPECT_EQ(fill_placeholders("x{a}y{bb}{{z}}", v, ""), "x1ytwo{z}");
  EXPECT_THROW(fill_placeholders("{c}", v, ""), ConfigError);
  EXPECT_THROW(fill_placeholders("a}", v, ""), ConfigError);
  EXPECT_THROW(fill_placeholders("{a", v, ""), ConfigError);
}

}  // namespace
}  // namespace slipstream::launch

namespace slipstream::launch {
namespace {

TEST(Experiment, BatchBackEndsWriteTheirJobScriptsAndStartSteps) {
  const std::string body = R"(
[[server]]
name = "db"
[[application]]
name = "sim"
exe = "sim"
ranks = 3
)";
  const Experiment slurm = parse("[experiment]\nname = \"s\"\nbackend = \"slurm\"\n[slurm]\ntime = "
                                 "\"00:05:00\"\npartition = \"debug\"\nsrun_args = [\"--mpi=pmix\"]\n" +
                                 body);
  const Plan plan = make_plan(slurm, "/bin/slipstream", "/runs/s");
  EXPECT_EQ(plan.find("sim")->argv,
            (std::vector<std::string>{"srun", "-n", "3", "--overlap", "--overcommit",
                                      "--export=ALL", "--kill-on-bad-exit=1", "--mpi=pmix", "sim"}));
  EXPECT_EQ(plan.find("db")->argv.front(), "srun");  // servers are job steps too
  const std::string script = batch_script(slurm, "/x/s.toml", "/runs/s", "/bin/slipstream");
  for (const char* line : {"#SBATCH --job-name=s\n", "#SBATCH --time=00:05:00\n",
                           "#SBATCH --partition=debug\n", "#SBATCH --output=/runs/s/slurm-%j.out\n",
                           "exec '/bin/slipstream' run '/x/s.toml' --run-dir '/runs/s' "
                           "--in-allocation\n"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line << " in\n" << script;
  }
  EXPECT_EQ(batch_script_path(slurm, "/runs/s"), "/runs/s/job.sbatch");

  const Experiment pbs = parse("[experiment]\nname = \"a-long-experiment-name\"\nbackend = \"pbs\"\n"
                               "[pbs]\nmpiexec_args = [\"-x\", \"SSDB\"]\naccount = \"proj\"\n" + body);
  EXPECT_EQ(make_plan(pbs, "/bin/slipstream", "/runs/p").find("sim")->argv,
            (std::vector<std::string>{"mpiexec", "-n", "3", "-x", "SSDB", "sim"}));
  const std::string pbs_script = batch_script(pbs, "/x/p.toml", "/runs/p", "/bin/slipstream");
  for (const char* line : {"#PBS -N a-long-experime\n", "#PBS -l select=1:ncpus=1\n",
                           "#PBS -l walltime=01:00:00\n", "#PBS -A proj\n",
                           "#PBS -o /runs/p/pbs.out\n", "cd '/runs/p' || exit 1\n"}) {
    EXPECT_NE(pbs_script.find(line), std::string::npos) << line << " in\n" << pbs_script;
  }
  EXPECT_NE(error_of("[experiment]\nname = \"x\"\n[slurm]\nnodes = 0\n" + body).find("nodes must be"),
            std::string::npos);
}

}  // namespace
}  // namespace slipstream::launch

namespace slipstream::launch {
namespace {

TEST(Experiment, ProcessesArePlacedOnTheNodesInTurnWithAColocatedShardOnEach) {
  const Experiment x = parse(R"(
[experiment]
name = "n"
backend = "slurm"
[slurm]
nodes = 2
[[server]]
name = "db"
mode = "colocated"
[[server]]
name = "big"
mode = "cluster"
shards = 3
[[application]]
name = "sim"
exe = "sim"
server = "db"
[application.ensemble]
replicas = 3
[[trainer]]
name = "learn"
config = "t.toml"
server = "big"
)");
  EXPECT_EQ(plan_nodes(x), (std::vector<std::string>{"node0", "node1"}));  // outside a job
  const Plan plan = make_plan(x, "/bin/slipstream", "/runs/n", {"a", "b"});
  ASSERT_EQ(plan.shards("db").size(), 2u);  // one per node
  EXPECT_EQ(plan.find("db_0")->node, "a");
  EXPECT_EQ(plan.find("db_1")->node, "b");
  EXPECT_EQ(plan.find("big_2")->node, "a");  // a cluster's shards in turn
  EXPECT_EQ(plan.find("sim_0")->node, "a");
  EXPECT_EQ(plan.find("sim_1")->node, "b");
  EXPECT_EQ(plan.find("sim_2")->node, "a");
  EXPECT_EQ(plan.find("sim_1")->server_shard, "db_1");  // its own node's shard
  EXPECT_EQ(plan.find("learn")->node, "b");
  EXPECT_EQ(plan.find("learn")->server_shard, "");  // a cluster is one database
  const auto& argv = plan.find("sim_1")->argv;
  const std::vector<std::string> on_b = {"-N", "1", "-w", "b"};
  EXPECT_NE(std::search(argv.begin(), argv.end(), on_b.begin(), on_b.end()), argv.end());
  EXPECT_NE(describe(plan).find("SSDB=<the address of db_1, the shard of db on its node>"),
            std::string::npos);
  // Servers on several nodes listen on every interface: without a password of the experiment's,
  // the run makes one (a server without one refuses peers of other hosts).
  EXPECT_TRUE(plan.password_generated);
  EXPECT_EQ(plan.password_file, "/runs/n/password");
  const auto& server = plan.find("big_1")->argv;
  EXPECT_NE(std::find(server.begin(), server.end(), "--requirepass-file"), server.end());
  EXPECT_NE(describe(plan).find("password: generated for the run"), std::string::npos);
  // On one node the servers stay on the loopback: no password unless the experiment sets one.
  const Plan one = make_plan(x, "/bin/slipstream", "/runs/n", {"a"});
  EXPECT_FALSE(one.password_generated);
  EXPECT_EQ(one.password_file, "");
}

}  // namespace
}  // namespace slipstream::launch
