#include "pic_coupling.hpp"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <utility>

#include "slipstream/error.hpp"

namespace slipstream::pic {

namespace {

using openPMD::UnitDimension;
using Dimension = std::map<UnitDimension, double>;

// openPMD's unitDimension: powers of length, mass, time, current, temperature, amount, intensity.
const Dimension kLength{{UnitDimension::L, 1}};
const Dimension kMomentum{{UnitDimension::L, 1}, {UnitDimension::M, 1}, {UnitDimension::T, -1}};
const Dimension kCharge{{UnitDimension::T, 1}, {UnitDimension::I, 1}};
const Dimension kMass{{UnitDimension::M, 1}};
const Dimension kElectricField{
    {UnitDimension::L, 1}, {UnitDimension::M, 1}, {UnitDimension::T, -3}, {UnitDimension::I, -1}};
const Dimension kNone{};

// The training samples: a 2-D mesh of rows (samples) by columns (df, then E).
constexpr const char* kSamples = "phase_space_samples";
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
      // The SST parameters an openPMD-api program would give, and where the server is.
      const std::string config =
          R"({"slipstream": {"address": ")" + settings_.address + R"(")" +
          (settings_.stream.reductions.empty()
               ? std::string()
               : R"(, "reductions": )" + settings_.stream.reductions) +
          R"(}, "adios2": {"engine": {"parameters": {"QueueLimit": ")" +
          std::to_string(settings_.stream.queue_limit) + R"(", "RendezvousReaderCount": ")" +
          std::to_string(settings_.stream.expected_groups) + R"("}})" +
          (settings_.stream.operators.empty()
               ? std::string()
               : R"(, "dataset": {"operators": )" + settings_.stream.operators + "}") +
          "}}";
      series_.emplace(settings_.stream.name + ".sst", openPMD::Access::CREATE, config,
                      static_cast<int>(rank), static_cast<int>(ranks), nullptr);
      set_series_attributes();
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

// The series' attributes (every rank sets the same: the stream takes them once).
void Coupling::set_series_attributes() {
  series_->setSoftware("slipstream-pic", "1.0");
  series_->setComment(
      "1D1V electrostatic PIC, two-stream instability, normalised units: time in 1/omega_p, "
      "charge in e, mass in m_e, density in n0, eps0 = 1 (unitSI = 1 leaves values in these "
      "units)");
}

// An iteration's openPMD attributes and constant records; every rank sets the same.
void Coupling::set_iteration_attributes(const Pic& pic, openPMD::Iteration& iteration) const {
  const PicParameters& p = pic.parameters();
  const std::uint64_t particles = p.particles();
  iteration.setTime(pic.time()).setDt(p.dt).setTimeUnitSI(1.0);

  openPMD::Mesh e = iteration.meshes["E"];
  e.setGeometry(openPMD::Mesh::Geometry::cartesian);
  e.setDataOrder(openPMD::Mesh::DataOrder::C);
  e.setAxisLabels({"x"});
  e.setGridSpacing(std::vector<double>{pic.cell_size()});
  e.setGridGlobalOffset({0.0});
  e.setGridUnitSI(1.0);
  e.setUnitDimension(kElectricField);
  e.setTimeOffset(0.0f);
  e["x"].setUnitSI(1.0);
  e["x"].setPosition(std::vector<double>{0.5});  // cell centres
  e["x"].resetDataset(openPMD::Dataset(openPMD::Datatype::DOUBLE, {p.cells}));

  // One macro-particle stands for L / N_p electrons (per unit area); charge, mass and momentum are
  // a real electron's (macroWeighted 0), scaled by the weighting to the macro-particle's.
  openPMD::ParticleSpecies electrons = iteration.particles["electrons"];
  auto record = [&](const std::string& name, const Dimension& dimension, float time_offset,
                    std::int64_t macro_weighted, double weighting_power) -> openPMD::Record& {
    openPMD::Record& r = electrons[name];
    r.setUnitDimension(dimension);
    r.setTimeOffset(time_offset);
    r.setAttribute("macroWeighted", macro_weighted);
    r.setAttribute("weightingPower", weighting_power);
    return r;
  };
  auto constant = [&](openPMD::RecordComponent& component, double value) {
    component.resetDataset(openPMD::Dataset(openPMD::Datatype::DOUBLE, {particles}));
    component.makeConstant(value);
    component.setUnitSI(1.0);
  };
  for (const char* name : {"position", "momentum"}) {
    // v is at t_{n-1/2} (leapfrog): half a step before the step's time.
    openPMD::Record& r = std::string(name) == "position"
                             ? record(name, kLength, 0.0f, 0, 0.0)
                             : record(name, kMomentum, static_cast<float>(-0.5 * p.dt), 0, 1.0);
    r["x"].setUnitSI(1.0);
    r["x"].resetDataset(openPMD::Dataset(openPMD::Datatype::DOUBLE, {particles}));
  }
  constant(record("charge", kCharge, 0.0f, 0, 1.0)[openPMD::RecordComponent::SCALAR], -1.0);
  constant(record("mass", kMass, 0.0f, 0, 1.0)[openPMD::RecordComponent::SCALAR], 1.0);
  constant(record("weighting", kNone, 0.0f, 1, 1.0)[openPMD::RecordComponent::SCALAR],
           p.length / static_cast<double>(particles));

  const PhaseSpaceBins& b = settings_.bins;
  openPMD::Mesh samples = iteration.meshes[kSamples];
  samples.setAxisLabels({"sample", "column"});
  samples.setGridSpacing(std::vector<double>{1.0, 1.0});
  samples.setGridGlobalOffset({0.0, 0.0});
  samples.setAttribute("x_bins", static_cast<std::int64_t>(b.x_bins));
  samples.setAttribute("v_bins", static_cast<std::int64_t>(b.v_bins));
  samples.setAttribute("v_max", b.v_max);
  samples.setAttribute("cells", static_cast<std::int64_t>(p.cells));
  samples.setAttribute("input_columns", static_cast<std::int64_t>(b.size()));
  samples.setAttribute("target_columns", static_cast<std::int64_t>(p.cells));
  samples.setAttribute(
      "description",
      std::string("one sample per row: the electron phase-space density perturbation "
                  "df(x_bin, v_bin) (x-major, mean of f over the bins 1, x-average removed), then "
                  "E at the cell centres; row b of a step is the state translated by b x-bins"));
  openPMD::MeshRecordComponent rows = samples[openPMD::RecordComponent::SCALAR];
  rows.setPosition(std::vector<double>{0.0, 0.0});
  rows.resetDataset(openPMD::Dataset(openPMD::Datatype::FLOAT,
                                     {b.x_bins, sample_columns(b, p.cells)}));
}

void Coupling::after_step(const Pic& pic) {
  const std::size_t step = pic.step_count();
  const bool stream = series_.has_value() && due(step, settings_.stream.every);
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
  const std::uint64_t cells = p.cells;
  const std::size_t columns = sample_columns(settings_.bins, cells);

  openPMD::Iteration iteration = series_->writeIterations()[static_cast<std::uint64_t>(step)];
  set_iteration_attributes(pic, iteration);

  // E is whole on every rank: rank 0 writes it. Stores borrow their buffers until the
  // iteration is closed below, and on a stream that sends them without a copy.
  const auto field = pic.electric_field();
  if (world_.rank() == 0) {
    iteration.meshes["E"]["x"].storeChunkRaw(field.data(), {0}, {cells});
  }

  // Each rank its own particles, at their global indices.
  const auto x = pic.positions(), v = pic.velocities();
  if (!x.empty()) {
    openPMD::ParticleSpecies electrons = iteration.particles["electrons"];
    electrons["position"]["x"].storeChunkRaw(x.data(), {pic.particle_offset()}, {x.size()});
    // Momentum of one electron, m_e v with m_e = 1: the velocities themselves.
    electrons["momentum"]["x"].storeChunkRaw(v.data(), {pic.particle_offset()}, {v.size()});
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
    iteration.meshes[kSamples][openPMD::RecordComponent::SCALAR].storeChunkRaw(
        rows_.data(), {row_offset_, 0}, {rows, columns});
  }

  // The step goes out here; while the readers are a queue behind, this waits for a slot.
  const auto waiting = std::chrono::steady_clock::now();
  iteration.close();
  summary_.seconds_waiting +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();
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
  if (series_) {
    guarded(world_, "closing stream '" + settings_.stream.name + "'", [&] { series_->close(); });
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
    out << echo_.step << ",meshes/" << kSamples << "," << row_offset_ * echo_.columns + e << ','
        << std::setprecision(9) << echo_.rows[e] << std::setprecision(17) << '\n';
  }
  if (!out.flush()) throw CouplingError("cannot write " + path);
}

}  // namespace slipstream::pic
