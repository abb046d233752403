// slipstream.ReplayMemory: the trainer's replay memory (slipstream/replay_memory.hpp) holding any
// Python objects, for a Python training loop that learns from a stream (slipstream.StreamDataset).
#include "bindings.hpp"
#include "slipstream/replay_memory.hpp"

namespace slipstream::python {

void bind_replay(py::module_& module) {
  using Memory = train::ReplayMemory<py::object>;
  py::class_<Memory>(module, "ReplayMemory", R"doc(
A bounded memory of samples for training on a stream without forgetting earlier phases of the run
(docs/training.md, "Replay memory"): the same policies and seeded draws as `slipstream train`.

policy: "fifo" (the oldest goes), "firo" (a random held sample goes; the newest stays) or
"reservoir" (Algorithm R: every sample seen is held with equal probability). max_samples >= 1;
max_bytes 0: no byte bound (a sample's bytes are what add() is told); min_fill: ready() once that
many are held; seed: the generator's seed.
)doc")
      .def(py::init([](const std::string& policy, std::size_t max_samples, std::size_t max_bytes,
                       std::size_t min_fill, std::uint64_t seed) {
             train::ReplayConfig config;
             const auto parsed = train::parse_replay_policy(policy);
             if (!parsed) {
               throw InvalidArgumentError("replay policy must be \"fifo\", \"firo\" or "
                                          "\"reservoir\", got \"" + policy + "\"");
             }
             config.policy = *parsed;
             config.max_samples = max_samples;
             config.max_bytes = max_bytes;
             config.min_fill = min_fill;
             config.seed = seed;
             try {
               return std::make_unique<Memory>(config);
             } catch (const std::invalid_argument& e) {
               throw InvalidArgumentError(e.what());
             }
           }),
           py::arg("policy") = "reservoir", py::arg("max_samples") = 10000,
           py::arg("max_bytes") = 0, py::arg("min_fill") = 0, py::arg("seed") = 0)
      .def(
          "add", [](Memory& m, py::object sample, std::size_t bytes) {
            return m.add(std::move(sample), bytes);
          },
          py::arg("sample"), py::arg("bytes") = 0,
          "Offers a sample (any object) of `bytes` bytes; False when the policy did not keep it.")
      .def(
          "draw",
          [](Memory& m, std::size_t n) {
            py::list out;
            for (const py::object* sample : m.draw(n)) out.append(*sample);
            return out;
          },
          py::arg("n"), "n held samples drawn uniformly with replacement (empty when none held).")
      .def("ready", &Memory::ready, "Whether min_fill samples (and at least one) are held.")
      .def("__len__", &Memory::size)
      .def(
          "stats",
          [](const Memory& m) {
            const train::ReplayStats s = m.stats();
            py::dict d;
            d["held"] = s.held;
            d["bytes"] = s.bytes;
            d["seen"] = s.seen;
            d["admitted"] = s.admitted;
            d["evicted"] = s.evicted;
            d["refused"] = s.refused;
            d["draws"] = s.draws;
            d["mean_uses"] = s.mean_uses;
            d["max_uses"] = s.max_uses;
            d["mean_draw_age"] = s.mean_draw_age;
            return d;
          },
          "Occupancy and use: held, bytes, seen, admitted, evicted, refused, draws, mean_uses, "
          "max_uses, mean_draw_age.");
}

}  // namespace slipstream::python
