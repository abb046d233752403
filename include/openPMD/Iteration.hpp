// openPMD-api's Iteration: one time step of a series, with its meshes and particle species; and
// IndexedIteration, an iteration together with its index, as readIterations() yields them.
#pragma once

#include <cstdint>
#include <memory>

#include "openPMD/Container.hpp"
#include "openPMD/Record.hpp"
#include "slipstream/export.hpp"

namespace openPMD {

class SLIPSTREAM_API Iteration : public Attributable {
 public:
  using IterationIndex_t = std::uint64_t;

  explicit Iteration(std::shared_ptr<internal::Node> node);

  Container<Mesh> meshes;
  Container<ParticleSpecies> particles;

  template <typename T = double>
  T time() const {
    return containsAttribute("time") ? getAttribute("time").get<T>() : T(0);
  }
  template <typename T>
  Iteration& setTime(T time) {
    setAttribute("time", time);
    return *this;
  }
  template <typename T = double>
  T dt() const {
    return containsAttribute("dt") ? getAttribute("dt").get<T>() : T(1);
  }
  template <typename T>
  Iteration& setDt(T dt) {
    setAttribute("dt", dt);
    return *this;
  }
  double timeUnitSI() const;
  Iteration& setTimeUnitSI(double unit);

  /// Ends the iteration: its queued stores and loads are done (when `flush`), and it can no
  /// longer be changed. On a stream this ends the writer's step, or releases the reader's.
  /// Closing an iteration twice, or writing to a closed one, throws error::WrongAPIUsage.
  Iteration& close(bool flush = true);
  /// Opens a closed-for-now iteration of a file series again (a stream's steps cannot reopen).
  Iteration& open();
  bool closed() const;
};

class SLIPSTREAM_API IndexedIteration : public Iteration {
 public:
  using index_t = std::uint64_t;
  IndexedIteration(Iteration iteration, index_t index)
      : Iteration(std::move(iteration)), iterationIndex(index) {}
  index_t iterationIndex;
};

}  // namespace openPMD
