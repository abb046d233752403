// slipstream-pic and Slipstream: the program publishes its steps as an openPMD-shaped stream
// (every MPI rank is a writer of its own particles) and calls the model a trainer learns from
// that stream, comparing its prediction with the field solver. See README.md, "Streaming" and
// "Learning from the plasma", for the layout and what is learned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "phase_space.hpp"
#include "pic.hpp"
#include "slipstream/client.hpp"
#include "openPMD/openPMD.hpp"

namespace slipstream::pic {

struct StreamSettings {
  /// The stream; empty: nothing is published.
  std::string name;
  /// Steps 0, every, 2 every, ... are published.
  std::size_t every = 1;
  /// Reader groups the writers keep their steps for until they have joined (0: none; then a
  /// step nobody reads is dropped when the queue is full).
  std::uint32_t expected_groups = 1;
  /// Steps the server holds at once: a blocking reader group a queue behind makes the run wait.
  std::size_t queue_limit = 2;
  /// Non-empty: rank r writes the last step it published to ECHO<r>.csv (for tests).
  std::string echo;
  /// Non-empty: the compression operator of every dataset published, as openPMD-api users write
  /// adios2.dataset.operators (a JSON list: [{"type": "zfp", "parameters": {"accuracy": 1e-5}}]).
  std::string operators;
  /// slipstream.reductions (a JSON list of {"function", "inputs", "output", "send_inputs"}):
  /// functions each rank runs on its own chunks before they are sent (apps/pic/reductions.py).
  std::string reductions;
};

struct ModelSettings {
  /// The key the trainer publishes the model to; empty: no model calls.
  std::string name;
  /// The model is called at steps 0, every, 2 every, ... (once it exists).
  std::size_t every = 10;
  /// A model file (the untrained one), stored as NAME.untrained and run beside NAME at every
  /// call: the error to beat. Empty: none.
  std::string baseline;
  /// The state of the first call from this step on is kept, and every later model is asked
  /// about it too: does it still know the early, linear phase?
  std::size_t probe_step = 200;
  /// Rank 0 writes a row per call here; empty: no file.
  std::string csv;
};

struct CouplingSettings {
  std::string address;  // empty: SLIPSTREAM_ADDRESS, then SSDB
  PhaseSpaceBins bins;
  StreamSettings stream;
  ModelSettings model;
  bool enabled() const { return !stream.name.empty() || !model.name.empty(); }
};

/// A failure of the coupling on one rank (the server went away, a model failed). The ranks may
/// then be out of step, so the program ends the whole job rather than wait in a collective.
class CouplingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the coupling did, for the summary rank 0 prints.
struct CouplingSummary {
  std::size_t steps_published = 0;
  double seconds_waiting = 0;  // closing iterations: mostly waiting while readers are a queue behind
  std::size_t model_calls = 0;
  std::uint64_t last_version = 0;
  double last_error = -1;  // -1: the trained model never ran
  double last_baseline_error = -1;
};

/// The coupling of one rank. Every rank constructs it and calls after_step() after every step
/// (and once for the initial state) and finish() at the end: binning the phase space is a
/// collective.
class Coupling {
 public:
  /// Attaches this rank's stream writer and (rank 0) the model client; stores the baseline model.
  /// `growth_rate` (linear theory) goes into the model CSV's first line. Throws CouplingError.
  Coupling(CouplingSettings settings, const Pic& pic, const Communicator& world,
           double growth_rate);
  ~Coupling();
  Coupling(const Coupling&) = delete;
  Coupling& operator=(const Coupling&) = delete;

  /// Publishes and calls the model when the step is due. Throws CouplingError.
  void after_step(const Pic& pic);
  /// Closes the stream and writes the echo files. Throws CouplingError.
  CouplingSummary finish();

 private:
  void set_series_attributes();
  void set_iteration_attributes(const Pic& pic, openPMD::Iteration& iteration) const;
  void publish(const Pic& pic, const std::vector<double>& perturbation);
  void call_model(const Pic& pic, const std::vector<double>& perturbation);
  struct ModelRun {
    double error;  // relative L2 error against the solver's field
    std::uint64_t version;
    double milliseconds;
  };
  /// Runs the model `key` on `input` and compares it with `field`; nothing while it does not exist.
  std::optional<ModelRun> run(const std::string& key, std::span<const float> input,
                              std::span<const double> field);
  void write_echo() const;

  CouplingSettings settings_;
  const Communicator& world_;
  std::optional<openPMD::Series> series_;  // the stream, written through the openPMD layer
  std::optional<Client> client_;     // rank 0, for model calls
  std::vector<std::size_t> shifts_;  // this rank's sample translations
  std::size_t row_offset_ = 0;       // the first of its sample rows in the step's record
  std::vector<float> rows_;          // this rank's sample rows of the step being published
  std::vector<float> probe_input_;   // the state of ModelSettings::probe_step
  std::vector<double> probe_field_;
  std::ofstream csv_;
  CouplingSummary summary_;

  // The last published step as this rank wrote it (only with StreamSettings::echo).
  struct Echo {
    std::int64_t step = -1;
    std::vector<double> field, positions, momenta;
    std::vector<float> rows;
    std::size_t particle_offset = 0, columns = 0;
  } echo_;
};

}  // namespace slipstream::pic
