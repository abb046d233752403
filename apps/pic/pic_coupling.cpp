#include "pic_coupling.hpp"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <utility>

#include "slipstream/error.hpp"

namespace slipstream::pic {

namespace {

// openPMD's unitDimension: powers of length, mass, time, current, temperature, amount, intensity.
const std::vector<double> kLength{1, 0, 0, 0, 0, 0, 0};
const std::vector<double> kMomentum{1, 1, -1, 0, 0, 0, 0};
const std::vector<double> kCharge{0, 0, 1, 1, 0, 0, 0};
const std::vector<double> kMass{0, 1, 0, 0, 0, 0, 0};
const std::vector<double> kElectricField{1, 1, -3, -1, 0, 0, 0};
const std::vector<double> kNone(7, 0.0);

constexpr const char* kSamples = "samples/phase_space_field";
constexpr const char* kModelInput = "pic.phase_space";
constexpr const char* kModelOutput = "pic.field";
constexpr const char* kModelCsvHeader =
    "step,time,field_energy,mode_amplitude,version,error,baseline_error,probe_error,call_ms";

/// Runs `body`; any error becomes a CouplingError saying what was being done, on which rank.
template <typename Body>
auto guarded(const Communicator& world, const std::string& what, Body&& body) {
  try {
    return body();
  } catch (const CouplingError&) {
    throw;
  } catch (const std::exception& e) {
    throw CouplingError("rank " + std::to_string(world.rank()) + ", " + what + ": " + e.what());
  }
}

bool due(std::size_t step, std::size_t every) { return every > 0 && step % every == 0; }

}  // namespace

Coupling::Coupling(CouplingSettings settings, const Pic& pic, const Communicator& world,
                   double growth_rate)
    : settings_(std::move(settings)), world_(world) {
  settings_.bins.validate(pic.parameters());
  ClientOptions options;
  options.address = settings_.address;
  const auto rank = static_cast<std::uint32_t>(world_.rank());
  const auto ranks = static_cast<std::uint32_t>(world_.size());

  if (!settings_.stream.name.empty()) {
    guarded(world_, "attaching to stream '" + settings_.stream.name + "'", [&] {
      StreamWriterOptions writer_options;
      writer_options.queue_limit = settings_.stream.queue_limit;
      writer_options.expected_groups = settings_.stream.expected_groups;
      writer_.emplace(options, settings_.stream.name, rank, ranks, writer_options);
      if (rank == 0) set_stream_attributes(pic);
    });
    shifts_ = sample_translations(rank, ranks, settings_.bins.x_bins);
    // Rows are numbered rank-major: rank r's come after those of ranks 0 .. r-1.
    for (std::uint32_t q = 0; q < rank; ++q) {
      row_offset_ += sample_translations(q, ranks, settings_.bins.x_bins).size();
    }
  }

  if (!settings_.model.name.empty() && rank == 0) {
    guarded(world_, "connecting for model calls", [&] { client_.emplace(options); });
    if (!settings_.model.baseline.empty()) {
      guarded(world_, "storing the baseline model " + settings_.model.baseline, [&] {
        client_->set_model_from_file(settings_.model.name + ".untrained", settings_.model.baseline);
      });
    }
    if (!settings_.model.csv.empty()) {
      csv_.open(settings_.model.csv);
      if (!csv_) throw CouplingError("cannot write " + settings_.model.csv);
      const auto& p = pic.parameters();
      csv_ << std::setprecision(17) << "# slipstream-pic model calls: model "
           << settings_.model.name << ", baseline "
           << (settings_.model.baseline.empty() ? "none" : settings_.model.name + ".untrained")
           << "; growth_rate_theory=" << growth_rate << " k=" << p.wavenumber() << " v0=" << p.v0
           << " vth=" << p.vth << " dt=" << p.dt << " probe_step=" << settings_.model.probe_step
           << '\n'
           << kModelCsvHeader << '\n';
    }
  }
}

Coupling::~Coupling() = default;

// Stream-level attributes: the openPMD ones that do not change from step to step (readers and
// `slipstream stream dump` see them in every step), sent once by rank 0.
void Coupling::set_stream_attributes(const Pic& pic) {
  const PicParameters& p = pic.parameters();
  const auto particles = static_cast<std::int64_t>(p.particles());
  StreamWriter& w = *writer_;
  w.set_stream_attribute("/", "software", std::string("slipstream-pic"));
  w.set_stream_attribute(
      "/", "comment",
      std::string("1D1V electrostatic PIC, two-stream instability, normalised units: time in "
                  "1/omega_p, charge in e, mass in m_e, density in n0, eps0 = 1 (unitSI = 1 "
                  "leaves values in these units)"));

  w.set_stream_attribute("meshes/E", "geometry", std::string("cartesian"));
  w.set_stream_attribute("meshes/E", "dataOrder", std::string("C"));
  w.set_stream_attribute("meshes/E", "axisLabels", std::vector<std::string>{"x"});
  w.set_stream_attribute("meshes/E", "gridSpacing", std::vector<double>{pic.cell_size()});
  w.set_stream_attribute("meshes/E", "gridGlobalOffset", std::vector<double>{0.0});
  w.set_stream_attribute("meshes/E", "gridUnitSI", 1.0);
  w.set_stream_attribute("meshes/E", "unitDimension", kElectricField);
  w.set_stream_attribute("meshes/E", "timeOffset", 0.0);
  w.set_stream_attribute("meshes/E/x", "unitSI", 1.0);
  w.set_stream_attribute("meshes/E/x", "position", std::vector<double>{0.5});  // cell centres

  // One macro-particle stands for L / N_p electrons (per unit area); charge, mass and momentum are
  // a real electron's (macroWeighted 0), scaled by the weighting to the macro-particle's.
  const std::string species = "particles/electrons/";
  auto record = [&](const std::string& name, const std::vector<double>& dimension,
                    double time_offset, std::int64_t macro_weighted, double weighting_power) {
    w.set_stream_attribute(species + name, "unitDimension", dimension);
    w.set_stream_attribute(species + name, "timeOffset", time_offset);
    w.set_stream_attribute(species + name, "macroWeighted", macro_weighted);
    w.set_stream_attribute(species + name, "weightingPower", weighting_power);
  };
  auto constant = [&](const std::string& name, double value) {
    w.set_stream_attribute(species + name, "value", value);
    w.set_stream_attribute(species + name, "shape", std::vector<std::int64_t>{particles});
    w.set_stream_attribute(species + name, "unitSI", 1.0);
  };
  record("position", kLength, 0.0, 0, 0.0);
  w.set_stream_attribute(species + "position/x", "unitSI", 1.0);
  // v is at t_{n-1/2} (leapfrog): half a step before the step's time.
  record("momentum", kMomentum, -0.5 * p.dt, 0, 1.0);
  w.set_stream_attribute(species + "momentum/x", "unitSI", 1.0);
  record("charge", kCharge, 0.0, 0, 1.0);
  constant("charge", -1.0);
  record("mass", kMass, 0.0, 0, 1.0);
  constant("mass", 1.0);
  record("weighting", kNone, 0.0, 1, 1.0);
  constant("weighting", p.length / static_cast<double>(p.particles()));

  const PhaseSpaceBins& b = settings_.bins;
  w.set_stream_attribute(kSamples, "x_bins", static_cast<std::int64_t>(b.x_bins));
  w.set_stream_attribute(kSamples, "v_bins", static_cast<std::int64_t>(b.v_bins));
  w.set_stream_attribute(kSamples, "v_max", b.v_max);
  w.set_stream_attribute(kSamples, "cells", static_cast<std::int64_t>(p.cells));
  w.set_stream_attribute(kSamples, "input_columns", static_cast<std::int64_t>(b.size()));
  w.set_stream_attribute(kSamples, "target_columns", static_cast<std::int64_t>(p.cells));
  w.set_stream_attribute(
      kSamples, "description",
      std::string("one sample per row: the electron phase-space density perturbation "
                  "df(x_bin, v_bin) (x-major, mean of f over the bins 1, x-average removed), then "
                  "E at the cell centres; row b of a step is the state translated by b x-bins"));
}

void Coupling::after_step(const Pic& pic) {
  const std::size_t step = pic.step_count();
  const bool stream = writer_.has_value() && due(step, settings_.stream.every);
  const bool model = !settings_.model.name.empty() && due(step, settings_.model.every);
  if (!stream && !model) return;
  // Every rank bins (a collective), whether or not it calls the model.
  const std::vector<double> perturbation = phase_space_perturbation(pic, settings_.bins, world_);
  if (stream) {
    guarded(world_, "publishing step " + std::to_string(step), [&] { publish(pic, perturbation); });
  }
  if (model && client_) {
    guarded(world_, "calling model '" + settings_.model.name + "' at step " + std::to_string(step),
            [&] { call_model(pic, perturbation); });
  }
}

void Coupling::publish(const Pic& pic, const std::vector<double>& perturbation) {
  const PicParameters& p = pic.parameters();
  const auto step = static_cast<std::int64_t>(pic.step_count());
  const std::uint64_t cells = p.cells, particles = p.particles();
  const std::size_t columns = sample_columns(settings_.bins, cells);

  const auto waiting = std::chrono::steady_clock::now();
  writer_->begin_step(step);  // waits while a blocking reader group is a queue behind
  summary_.seconds_waiting +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();

  // E is whole on every rank: rank 0 writes it, with the step's time.
  const auto field = pic.electric_field();
  if (world_.rank() == 0) {
    const std::uint64_t global[] = {cells}, offset[] = {0};
    writer_->put_chunk<double>("meshes/E/x", global, offset, global, field);
    writer_->set_attribute("/", "time", pic.time());
    writer_->set_attribute("/", "dt", p.dt);
    writer_->set_attribute("/", "timeUnitSI", 1.0);
  }

  // Each rank its own particles, at their global indices (borrowed until end_step: no copy).
  const auto x = pic.positions(), v = pic.velocities();
  if (!x.empty()) {
    const std::uint64_t global[] = {particles}, offset[] = {pic.particle_offset()},
                        extent[] = {x.size()};
    writer_->put_chunk<double>("particles/electrons/position/x", global, offset, extent, x);
    // Momentum of one electron, m_e v with m_e = 1: the velocities themselves.
    writer_->put_chunk<double>("particles/electrons/momentum/x", global, offset, extent, v);
  }

  // The training samples: a row each, rank r the translations b = r, r + R, ... (whole rows per
  // chunk, so any chunk distribution hands a trainer rank whole samples).
  const std::size_t rows = shifts_.size();
  rows_.resize(rows * columns);
  for (std::size_t r = 0; r < rows; ++r) {
    write_sample(perturbation, field, settings_.bins, shifts_[r],
                 std::span(rows_).subspan(r * columns, columns));
  }
  if (rows > 0) {
    const std::uint64_t global[] = {settings_.bins.x_bins, columns}, offset[] = {row_offset_, 0},
                        extent[] = {rows, columns};
    writer_->put_chunk<float>(kSamples, global, offset, extent, rows_);
  }

  if (!writer_->end_step()) {
    std::cerr << "slipstream-pic: rank " << world_.rank() << ": step " << step
              << " was not published: " << writer_->last_abort_reason() << '\n';
    return;
  }
  ++summary_.steps_published;
  if (!settings_.stream.echo.empty()) {
    echo_.step = step;
    if (world_.rank() == 0) echo_.field.assign(field.begin(), field.end());
    echo_.positions.assign(x.begin(), x.end());
    echo_.momenta.assign(v.begin(), v.end());
    echo_.rows = rows_;
    echo_.particle_offset = pic.particle_offset();
    echo_.columns = columns;
  }
}

std::optional<Coupling::ModelRun> Coupling::run(const std::string& key,
                                                std::span<const float> input,
                                                std::span<const double> field) {
  const std::int64_t shape[] = {1, static_cast<std::int64_t>(input.size())};
  const TensorRef tensor = TensorRef::of<float>(kModelInput, input, shape);
  ModelVersion version;
  const auto started = std::chrono::steady_clock::now();
  std::vector<Tensor> outputs;
  try {
    outputs = client_->run_model_on(key, {&tensor, 1}, {kModelOutput}, {}, &version);
  } catch (const KeyNotFoundError&) {
    return std::nullopt;  // not published yet
  }
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - started;
  const Tensor& out = outputs.at(0);
  if (out.dtype() != DType::kFloat32 || out.size() != field.size()) {
    throw CouplingError("model '" + key + "' returned " + std::to_string(out.size()) +
                        " values (float32 expected), not one per cell (" +
                        std::to_string(field.size()) + ")");
  }
  const auto predicted = out.data<float>();
  double difference = 0, norm = 0;
  for (std::size_t j = 0; j < field.size(); ++j) {
    const double d = static_cast<double>(predicted[j]) - field[j];
    difference += d * d;
    norm += field[j] * field[j];
  }
  // The relative L2 error against the solver.
  return ModelRun{std::sqrt(difference / norm), version.ran, elapsed.count()};
}

void Coupling::call_model(const Pic& pic, const std::vector<double>& perturbation) {
  const ModelSettings& m = settings_.model;
  const std::vector<float> input(perturbation.begin(), perturbation.end());
  const auto field = pic.electric_field();
  const std::optional<ModelRun> trained = run(m.name, input, field);
  std::optional<ModelRun> untrained;
  if (!m.baseline.empty()) {
    untrained = run(m.name + ".untrained", input, field);
    if (!untrained) {
      throw CouplingError("the baseline model " + m.name + ".untrained has gone from the server");
    }
  }
  // The probe: the state of the first call from probe_step on, kept to ask every later model
  // about it (does it still know the linear phase?).
  if (probe_input_.empty() && pic.step_count() >= m.probe_step) {
    probe_input_ = input;
    probe_field_.assign(field.begin(), field.end());
  }
  std::optional<ModelRun> probe;
  if (trained && !probe_input_.empty()) probe = run(m.name, probe_input_, probe_field_);
  if (!trained && !untrained) return;  // nothing published yet, and nothing to compare with

  const Diagnostics& d = pic.diagnostics();
  if (trained) {
    ++summary_.model_calls;
    summary_.last_version = trained->version;
    summary_.last_error = trained->error;
  }
  if (untrained) summary_.last_baseline_error = untrained->error;
  if (csv_.is_open()) {
    csv_ << d.step << ',' << d.time << ',' << d.field_energy << ',' << d.mode_amplitude << ','
         << (trained ? trained->version : 0) << ',' << (trained ? trained->error : -1) << ','
         << (untrained ? untrained->error : -1) << ',' << (probe ? probe->error : -1) << ','
         << (trained ? trained->milliseconds : -1) << '\n';
    csv_.flush();  // a run stopped early still leaves its rows
  }
  if (trained) {
    std::ostringstream line;
    line << "model  step " << std::setw(6) << d.step << "  t " << std::fixed << std::setprecision(2)
         << std::setw(7) << d.time << "  version " << std::setw(4) << trained->version
         << std::scientific << std::setprecision(3) << "  error " << trained->error;
    if (untrained) line << "  (untrained " << untrained->error << ")";
    if (probe) line << "  at step " << m.probe_step << ": " << probe->error;
    line << std::fixed << std::setprecision(2) << "  " << trained->milliseconds << " ms\n";
    std::cout << line.str() << std::flush;
  }
}

CouplingSummary Coupling::finish() {
  if (writer_) {
    guarded(world_, "closing stream '" + settings_.stream.name + "'", [&] { writer_->close(); });
  }
  if (!settings_.stream.echo.empty() && echo_.step >= 0) write_echo();
  if (csv_.is_open() && !csv_.flush()) throw CouplingError("cannot write " + settings_.model.csv);
  return summary_;
}

// One line per element: component, flat global index (row-major), value, exact to the last bit.
void Coupling::write_echo() const {
  const std::string path = settings_.stream.echo + std::to_string(world_.rank()) + ".csv";
  std::ofstream out(path);
  out << "step,component,index,value\n" << std::setprecision(17);
  for (std::size_t j = 0; j < echo_.field.size(); ++j) {
    out << echo_.step << ",meshes/E/x," << j << ',' << echo_.field[j] << '\n';
  }
  for (std::size_t i = 0; i < echo_.positions.size(); ++i) {
    out << echo_.step << ",particles/electrons/position/x," << echo_.particle_offset + i << ','
        << echo_.positions[i] << '\n';
    out << echo_.step << ",particles/electrons/momentum/x," << echo_.particle_offset + i << ','
        << echo_.momenta[i] << '\n';
  }
  for (std::size_t e = 0; e < echo_.rows.size(); ++e) {
    out << echo_.step << ',' << kSamples << ',' << row_offset_ * echo_.columns + e << ','
        << std::setprecision(9) << echo_.rows[e] << std::setprecision(17) << '\n';
  }
  if (!out.flush()) throw CouplingError("cannot write " + path);
}

}  // namespace slipstream::pic
