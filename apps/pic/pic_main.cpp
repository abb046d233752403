// slipstream-pic: the two-stream instability with Pic, checked against linear theory.
//   slipstream-pic [options]                  run, print progress and a summary, --csv writes the
//                                             diagnostics, --check-* make a failed check exit 1
//   slipstream-pic compare A.csv B.csv        exit 1 unless two runs' diagnostics agree
// Under mpirun each rank owns a block of the particles; rank 0 prints and writes.
// With --stream every rank publishes its steps to a Slipstream stream; with --model rank 0 calls
// the model a trainer learns from it (pic_coupling.hpp; both off by default).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "pic.hpp"
#include "theory.hpp"
#if SLIPSTREAM_PIC_WITH_MPI
#include "pic_mpi.hpp"
#endif
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
#include "pic_coupling.hpp"
#endif

namespace pic = slipstream::pic;

namespace {

struct RunOptions {
  pic::PicParameters parameters;
  std::size_t steps = 600;
  std::size_t progress_every = 0;  // 0: a tenth of the run
  std::string csv;
  bool check_growth = false;
  double growth_tolerance = 0.10;
  bool check_energy = false;
  double energy_tolerance = 5e-3;
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
  pic::CouplingSettings coupling;
#endif
};

struct CompareOptions {
  std::vector<std::string> files;
  double tolerance = 1e-10;
};

// CLI11 would wrap "-5" around to a huge unsigned count, and its range messages print 1.8e308.
const CLI::Validator kPositiveCount(
    [](const std::string& value) {
      const bool digits =
          !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
      return digits && value.find_first_not_of('0') != std::string::npos
                 ? std::string()
                 : "must be a positive whole number, not " + value;
    },
    "POSITIVE");
const CLI::Validator kPositiveNumber(
    [](const std::string& value) {
      double number = 0;
      return CLI::detail::lexical_cast(value, number) && number > 0
                 ? std::string()
                 : "must be a positive number, not " + value;
    },
    "POSITIVE");

void add_run_options(CLI::App& app, RunOptions& o) {
  auto& p = o.parameters;
  app.add_option("--cells", p.cells, "grid cells N_g")
      ->check(kPositiveCount)
      ->capture_default_str();
  app.add_option("--particles-per-cell", p.particles_per_cell, "particles per cell, both beams")
      ->check(kPositiveCount)
      ->capture_default_str();
  app.add_option("--length", p.length, "box length L (default: k v0 = sqrt(3/8) for mode 1)")
      ->capture_default_str();
  app.add_option("--mode", p.mode, "seeded mode m, k = 2 pi m / L")->capture_default_str();
  app.add_option("--v0", p.v0, "beam speed (beams at +v0 and -v0)")->capture_default_str();
  app.add_option("--vth", p.vth, "rms thermal speed of each (water-bag) beam")
      ->capture_default_str();
  app.add_option("--perturbation", p.perturbation, "relative density amplitude of the seed")
      ->capture_default_str();
  app.add_option("--dt", p.dt, "time step in 1/omega_p")->capture_default_str();
  app.add_option("--seed", p.seed, "seed of the random start")->capture_default_str();
  app.add_flag_callback(
      "--random-start", [&p] { p.quiet_start = false; },
      "random positions and velocities instead of the quiet start");
  app.add_option("--steps", o.steps, "time steps")->check(kPositiveCount)->capture_default_str();
  app.add_option("--progress-every", o.progress_every,
                 "steps between progress lines (default: a tenth of the run)")
      ->check(kPositiveCount);
  app.add_option("--csv", o.csv, "write the diagnostics of every step to this file");
  app.add_flag("--check-growth", o.check_growth, "fail unless the growth rate matches theory");
  app.add_option("--growth-tolerance", o.growth_tolerance, "allowed |measured / theory - 1|")
      ->check(kPositiveNumber)
      ->capture_default_str();
  app.add_flag("--check-energy", o.check_energy, "fail unless the total energy is conserved");
  app.add_option("--energy-tolerance", o.energy_tolerance, "allowed max |W(t) / W(0) - 1|")
      ->check(kPositiveNumber)
      ->capture_default_str();
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
  auto& c = o.coupling;
  const char* const group = "Slipstream";
  app.add_option("--address", c.address, "the server (default: SLIPSTREAM_ADDRESS, then SSDB)")
      ->group(group);
  auto* stream = app.add_option("--stream", c.stream.name,
                                "publish E, the electrons and training samples to this stream")
                     ->group(group);
  app.add_option("--stream-every", c.stream.every, "steps between published steps")
      ->check(kPositiveCount)
      ->needs(stream)
      ->capture_default_str()
      ->group(group);
  app.add_option("--stream-groups", c.stream.expected_groups,
                 "reader groups the writers keep their steps for until they join")
      ->needs(stream)
      ->capture_default_str()
      ->group(group);
  app.add_option("--stream-queue", c.stream.queue_limit, "steps the server holds at once")
      ->check(kPositiveCount)
      ->needs(stream)
      ->capture_default_str()
      ->group(group);
  app.add_option("--stream-operators", c.stream.operators,
                 "compress what is published: adios2.dataset.operators as JSON, e.g. "
                 "'[{\"type\": \"zfp\", \"parameters\": {\"accuracy\": 1e-5}}]' (zfp: the "
                 "floating-point datasets)")
      ->needs(stream)
      ->group(group);
  app.add_option("--stream-reductions", c.stream.reductions,
                 "ship what a function of each rank's chunks gives instead of the chunks: "
                 "slipstream.reductions as JSON, e.g. '[{\"function\": \"phase_space.pt\", "
                 "\"inputs\": [\"particles/electrons/position/x\", "
                 "\"particles/electrons/momentum/x\"], \"output\": \"meshes/phase_space\"}]' "
                 "(reductions.py writes phase_space.pt)")
      ->needs(stream)
      ->group(group);
  app.add_option("--stream-echo", c.stream.echo,
                 "rank r writes the last step it published to PREFIXr.csv (for tests)")
      ->needs(stream)
      ->group(group);
  auto* model = app.add_option("--model", c.model.name,
                               "call this model (the trainer's) with the phase space and compare "
                               "its field with the solver's")
                    ->group(group);
  app.add_option("--model-every", c.model.every, "steps between model calls")
      ->check(kPositiveCount)
      ->needs(model)
      ->capture_default_str()
      ->group(group);
  app.add_option("--baseline-model", c.model.baseline,
                 "a TorchScript file (the untrained model) run beside the model as the error to "
                 "beat")
      ->check(CLI::ExistingFile)
      ->needs(model)
      ->group(group);
  app.add_option("--model-probe-step", c.model.probe_step,
                 "keep the state of the first call from this step on and ask every later model "
                 "about it too")
      ->needs(model)
      ->capture_default_str()
      ->group(group);
  app.add_option("--csv-model", c.model.csv, "write every model call's error to this file")
      ->needs(model)
      ->group(group);
  app.add_option("--x-bins", c.bins.x_bins, "phase-space bins in x (must divide the cells)")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->group(group);
  app.add_option("--v-bins", c.bins.v_bins, "phase-space bins in v")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->group(group);
  app.add_option("--v-max", c.bins.v_max, "phase-space velocity range [-v_max, v_max]")
      ->check(kPositiveNumber)
      ->capture_default_str()
      ->group(group);
#endif
}

void write_csv(const std::string& path, const std::vector<pic::Diagnostics>& history) {
  std::ofstream out(path);
  out << "step,time,field_energy,kinetic_energy,total_energy,mode_amplitude\n"
      << std::setprecision(17);
  for (const auto& d : history) {
    out << d.step << ',' << d.time << ',' << d.field_energy << ',' << d.kinetic_energy << ','
        << d.total_energy() << ',' << d.mode_amplitude << '\n';
  }
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

/// max_t |W(t) - W(0)| / W(0) for the total energy W.
double energy_drift(const std::vector<pic::Diagnostics>& history) {
  const double initial = history.front().total_energy();
  double drift = 0;
  for (const auto& d : history) drift = std::max(drift, std::abs(d.total_energy() - initial));
  return drift / initial;
}

void print_progress(const pic::Diagnostics& d) {
  std::ostringstream line;  // its own stream: the formatting does not stick to std::cout
  line << "step " << std::setw(6) << d.step << "  t " << std::fixed << std::setprecision(2)
       << std::setw(7) << d.time << std::scientific << std::setprecision(4) << "  field "
       << d.field_energy << "  kinetic " << d.kinetic_energy << "  total " << d.total_energy()
       << "  |E_m| " << d.mode_amplitude << '\n';
  std::cout << line.str();
}

/// Prints the measured and the theoretical growth rate; true when they agree within tolerance.
bool report_growth(const RunOptions& o, const std::vector<pic::Diagnostics>& history,
                   std::ostream& out) {
  const auto& p = o.parameters;
  const double k = p.wavenumber();
  const double theory = pic::growth_rate(k, pic::counter_streaming_beams(p.v0, p.vth));
  out << "growth rate theory: " << theory << " (" << (p.vth > 0 ? "water-bag" : "cold")
      << " beams, k = " << k << ", k v0 = " << k * p.v0 << ")\n";
  if (!(theory > 0)) {
    out << "growth rate measured: not compared (theory: no unstable mode at this k)\n";
    return false;
  }
  std::vector<double> times, amplitudes;
  for (const auto& d : history) {
    times.push_back(d.time);
    amplitudes.push_back(d.mode_amplitude);
  }
  try {
    const auto fit = pic::fit_growth_rate(times, amplitudes);
    const double ratio = fit.rate / theory;
    out << "growth rate measured: " << fit.rate << " (fit of ln|E_" << p.mode
        << "| over t = " << fit.t_begin << " .. " << fit.t_end << ", " << fit.points
        << " samples), measured / theory = " << ratio << '\n';
    return std::abs(ratio - 1) <= o.growth_tolerance;
  } catch (const std::runtime_error& e) {
    out << "growth rate measured: none (" << e.what() << ")\n";
    return false;
  }
}

#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
void print_coupling_summary(const pic::CouplingSettings& settings,
                            const pic::CouplingSummary& summary) {
  if (!settings.stream.name.empty()) {
    std::cout << "stream '" << settings.stream.name << "': " << summary.steps_published
              << " steps published, " << summary.seconds_waiting
              << " s waiting for the readers (rank 0)\n";
  }
  if (!settings.model.name.empty()) {
    std::cout << "model '" << settings.model.name << "': " << summary.model_calls << " calls";
    if (summary.model_calls > 0) {
      std::cout << ", last: version " << summary.last_version << ", error " << summary.last_error;
    }
    if (summary.last_baseline_error >= 0) {
      std::cout << " (untrained " << summary.last_baseline_error << ")";
    }
    std::cout << '\n';
  }
}
#endif

int run(const RunOptions& o, const pic::Communicator& world) {
  const bool root = world.rank() == 0;
  const auto started = std::chrono::steady_clock::now();
  pic::Pic simulation(o.parameters, world);
  const auto& p = o.parameters;
  if (root) {
    std::cout << "slipstream-pic: " << p.cells << " cells, " << p.particles() << " particles ("
              << simulation.positions().size() << " on rank 0 of " << world.size()
              << "), L = " << p.length << ", mode " << p.mode << ", v0 = " << p.v0
              << ", vth = " << p.vth << ", dt = " << p.dt << ", " << o.steps << " steps, "
              << (p.quiet_start ? "quiet" : "random") << " start\n";
  }
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
  std::optional<pic::Coupling> coupling;
  if (o.coupling.enabled()) {
    const double theory =
        pic::growth_rate(p.wavenumber(), pic::counter_streaming_beams(p.v0, p.vth));
    coupling.emplace(o.coupling, simulation, world, theory);
    coupling->after_step(simulation);  // the initial state
  }
#endif
  const std::size_t every =
      o.progress_every > 0 ? o.progress_every : std::max<std::size_t>(1, o.steps / 10);
  std::vector<pic::Diagnostics> history{simulation.diagnostics()};
  for (std::size_t n = 1; n <= o.steps; ++n) {
    simulation.step();
    history.push_back(simulation.diagnostics());
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
    if (coupling) coupling->after_step(simulation);
#endif
    if (root && n % every == 0) print_progress(history.back());
  }
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
  if (coupling) {
    const pic::CouplingSummary summary = coupling->finish();
    if (root) print_coupling_summary(o.coupling, summary);
  }
#endif
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;

  // Every rank holds the same diagnostics and so reaches the same verdict; only rank 0 speaks.
  // It writes the CSV after the run, when no other rank can be left waiting in a collective.
  std::ostream silent(nullptr);
  std::ostream& out = root ? std::cout : silent;
  if (root && !o.csv.empty()) write_csv(o.csv, history);
  const bool growth_ok = report_growth(o, history, out);
  const double drift = energy_drift(history);
  double peak_field = 0;
  for (const auto& d : history) peak_field = std::max(peak_field, d.field_energy);
  out << "energy drift: max |W(t) - W(0)| / W(0) = " << drift << " (peak field energy "
      << peak_field / history.front().total_energy() << " W(0))\n"
      << "run time: " << elapsed.count() << " s\n";
  bool failed = false;
  if (o.check_growth) {
    out << "check growth rate (|measured / theory - 1| <= " << o.growth_tolerance
        << "): " << (growth_ok ? "ok" : "FAILED") << '\n';
    failed |= !growth_ok;
  }
  if (o.check_energy) {
    const bool energy_ok = drift <= o.energy_tolerance;
    out << "check energy (drift <= " << o.energy_tolerance << "): " << (energy_ok ? "ok" : "FAILED")
        << '\n';
    failed |= !energy_ok;
  }
  return failed ? 1 : 0;
}

struct Table {
  std::string header;
  std::vector<std::vector<double>> rows;
};

Table read_csv(const std::string& path) {
  std::ifstream in(path);
  Table table;
  if (!std::getline(in, table.header)) throw std::runtime_error("cannot read " + path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::vector<double> row;
    for (std::string field; std::getline(fields, field, ',');) {
      char* end = nullptr;
      row.push_back(std::strtod(field.c_str(), &end));
      if (field.empty() || *end != '\0') {
        throw std::runtime_error(path + ": not a number: \"" + field + '"');
      }
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

/// Each column's largest difference relative to its largest magnitude; 1 unless within tolerance.
int compare(const CompareOptions& o) {
  const Table a = read_csv(o.files[0]);
  const Table b = read_csv(o.files[1]);
  if (a.header != b.header || a.rows.size() != b.rows.size()) {
    throw std::runtime_error("the files have different columns or numbers of rows");
  }
  std::istringstream names(a.header);
  bool failed = false;
  std::string name;
  for (std::size_t c = 0; std::getline(names, name, ','); ++c) {
    double scale = std::numeric_limits<double>::min(), difference = 0;
    for (std::size_t r = 0; r < a.rows.size(); ++r) {
      if (a.rows[r].size() != b.rows[r].size()) throw std::runtime_error("ragged rows");
      scale = std::max({scale, std::abs(a.rows[r].at(c)), std::abs(b.rows[r].at(c))});
      difference = std::max(difference, std::abs(a.rows[r][c] - b.rows[r][c]));
    }
    const double relative = difference / scale;
    failed |= relative > o.tolerance;
    std::cout << name << ": max difference " << relative << " of the largest value\n";
  }
  std::cout << (failed ? "FAILED" : "ok") << ": " << a.rows.size() << " rows, tolerance "
            << o.tolerance << '\n';
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
#if SLIPSTREAM_PIC_WITH_MPI
  const pic::MpiSession mpi(argc, argv);
  const pic::Communicator& world = mpi.world();
#else
  const pic::SerialCommunicator world;
#endif
  CLI::App app{"slipstream-pic: the two-stream instability, particle-in-cell, against theory"};
  RunOptions run_options;
  add_run_options(app, run_options);
  CompareOptions compare_options;
  auto* compare_command = app.add_subcommand("compare", "compare two --csv files of diagnostics");
  compare_command->add_option("files", compare_options.files, "two CSV files")
      ->expected(2)
      ->required()
      ->check(CLI::ExistingFile);
  compare_command
      ->add_option("--tolerance", compare_options.tolerance,
                   "allowed difference relative to a column's largest value")
      ->check(kPositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return world.rank() == 0 ? app.exit(e) : e.get_exit_code();
  }
  try {
    return compare_command->parsed() ? compare(compare_options) : run(run_options, world);
#if SLIPSTREAM_PIC_WITH_SLIPSTREAM
  } catch (const pic::CouplingError& e) {
    // On one rank only, perhaps, while the others wait in a collective: end them all.
    std::cerr << "slipstream-pic: " << e.what() << '\n';
    if (world.size() > 1) world.abort(3);
    return 3;
#endif
  } catch (const std::exception& e) {
    if (world.rank() == 0) std::cerr << "slipstream-pic: " << e.what() << '\n';
    return 2;
  }
}
