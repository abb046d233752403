// openPMD-api's Series: the root of the data model, opened on a Slipstream stream (`name.sst`,
// `.ssc`, `.slip`, or backend = "slipstream") or an HDF5 file (`name.h5`, `name_%T.h5`).
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "openPMD/Container.hpp"
#include "openPMD/Iteration.hpp"
#include "openPMD/config.hpp"
#include "slipstream/export.hpp"

#if openPMD_HAVE_MPI
#include <mpi.h>
#endif

namespace openPMD {

using Access_Type = Access;

enum class IterationEncoding { fileBased, groupBased, variableBased };

namespace chunk_assignment {
/// Rank -> host name.
using RankMeta = std::map<unsigned int, std::string>;
}  // namespace chunk_assignment

namespace internal {
struct SeriesState;  // src/openpmd/series_state.hpp
}  // namespace internal

class Series;

/// The iterations of a series in order, each closed when the loop moves past it. On a stream,
/// ++ waits for the next step (steps that were aborted are skipped); the loop ends when the
/// writers have closed the stream.
class SLIPSTREAM_API ReadIterations {
 public:
  class SLIPSTREAM_API iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = IndexedIteration;
    using difference_type = std::ptrdiff_t;
    using pointer = IndexedIteration*;
    using reference = IndexedIteration&;

    iterator() = default;  // the end
    explicit iterator(std::shared_ptr<internal::SeriesState> series);
    IndexedIteration& operator*() { return *current_; }
    IndexedIteration* operator->() { return &*current_; }
    iterator& operator++();
    bool operator==(const iterator& other) const { return !current_ == !other.current_; }
    bool operator!=(const iterator& other) const { return !(*this == other); }

   private:
    void advance();
    std::shared_ptr<internal::SeriesState> series_;
    std::optional<IndexedIteration> current_;
  };

  explicit ReadIterations(std::shared_ptr<internal::SeriesState> series) : series_(std::move(series)) {}
  iterator begin();
  iterator end() { return {}; }

 private:
  std::shared_ptr<internal::SeriesState> series_;
};

/// Iterations to write, one after the other: accessing a new index closes the previous one.
class SLIPSTREAM_API WriteIterations {
 public:
  using key_type = std::uint64_t;
  using mapped_type = Iteration;
  explicit WriteIterations(std::shared_ptr<internal::SeriesState> series) : series_(std::move(series)) {}
  Iteration& operator[](std::uint64_t index);
  /// The iteration being written, if one is open.
  std::optional<IndexedIteration> currentIteration();

 private:
  std::shared_ptr<internal::SeriesState> series_;
};

/// openPMD-api 0.16's view of the iterations: writeIterations() or readIterations() or the
/// random-access container, depending on how the series was opened, behind one interface.
class SLIPSTREAM_API Snapshots {
 public:
  using key_type = std::uint64_t;
  using mapped_type = Iteration;
  using value_type = std::pair<const std::uint64_t, Iteration>;

  class SLIPSTREAM_API iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Snapshots::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = value_type*;
    using reference = value_type&;

    iterator() = default;
    iterator(std::shared_ptr<internal::SeriesState> series, bool linear);
    value_type& operator*() { return *current_; }
    value_type* operator->() { return &*current_; }
    iterator& operator++();
    bool operator==(const iterator& other) const { return !current_ == !other.current_; }
    bool operator!=(const iterator& other) const { return !(*this == other); }

   private:
    void load();
    std::shared_ptr<internal::SeriesState> series_;
    bool linear_ = false;
    std::optional<ReadIterations::iterator> reading_;
    std::uint64_t next_key_ = 0;  // random access: the next index at or above this
    std::optional<value_type> current_;
  };

  explicit Snapshots(std::shared_ptr<internal::SeriesState> series) : series_(std::move(series)) {}
  iterator begin();
  iterator end() { return {}; }
  /// The iteration `index`: created when writing, found when reading a file.
  Iteration& operator[](std::uint64_t index);
  Iteration& at(std::uint64_t index);
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  bool contains(std::uint64_t index) const;

 private:
  std::shared_ptr<internal::SeriesState> series_;
};

class SLIPSTREAM_API Series : public Attributable {
 public:
  /// No series (operator bool is false).
  Series();
  /// Opens `filepath` with `access`. `options` is JSON or TOML, inline or `@file`
  /// (docs/openpmd.md lists what is read). Throws error::WrongAPIUsage for an unknown ending,
  /// error::BackendConfigSchema for options that do not parse, error::ReadError when a series to
  /// read cannot be opened, slipstream's errors when the server cannot be reached.
  Series(const std::string& filepath, Access access, const std::string& options = "{}");
#if openPMD_HAVE_MPI
  /// One rank of `comm`: a writer rank of the stream (or a reader of its group). Files are
  /// written by rank 0 of 1 only (parallel HDF5 is not available; see docs/openpmd.md).
  Series(const std::string& filepath, Access access, MPI_Comm comm,
         const std::string& options = "{}")
      : Series(filepath, access, options, mpi_rank(comm), mpi_size(comm),
               [comm](const std::string& mine) { return mpi_allgather(comm, mine); }) {}
#endif
  ~Series() override;
  Series(const Series&) = default;
  Series& operator=(const Series&) = default;

  explicit operator bool() const noexcept;

  /// Random access to the iterations (files); on a stream, the one step held.
  Container<Iteration, std::uint64_t> iterations;

  std::string openPMD() const;
  Series& setOpenPMD(const std::string& version);
  std::uint32_t openPMDextension() const;
  Series& setOpenPMDextension(std::uint32_t extension);
  std::string basePath() const;
  Series& setBasePath(const std::string& path);
  std::string meshesPath() const;
  Series& setMeshesPath(const std::string& path);
  std::string particlesPath() const;
  Series& setParticlesPath(const std::string& path);
  std::string author() const;
  Series& setAuthor(const std::string& author);
  std::string software() const;
  Series& setSoftware(const std::string& name, const std::string& version = "unspecified");
  std::string softwareVersion() const;
  std::string date() const;
  Series& setDate(const std::string& date);
  std::string softwareDependencies() const;
  Series& setSoftwareDependencies(const std::string& dependencies);
  std::string machine() const;
  Series& setMachine(const std::string& machine);
  IterationEncoding iterationEncoding() const;
  Series& setIterationEncoding(IterationEncoding encoding);
  std::string iterationFormat() const;
  Series& setIterationFormat(const std::string& format);
  /// The series' name (the file name without its ending; a stream's name).
  std::string name() const;
  Series& setName(const std::string& name);
  /// "SLIPSTREAM" or "HDF5".
  std::string backend() const;

  /// Does every queued store and load (of every open iteration).
  void flush(const std::string& backend_config = "{}");
  /// Closes the open iterations and the series (a stream's writer closes; a reader leaves).
  void close();

  ReadIterations readIterations();
  WriteIterations writeIterations();
  Snapshots snapshots();
  /// Reads the series' structure (done by the constructor; kept for openPMD-api programs).
  void parseBase();

  /// The writers' ranks and hosts (reading a stream), or this series' own ranks (writing; with
  /// `collective`, gathered over the communicator).
  chunk_assignment::RankMeta rankTable(bool collective);
  Series& setRankTable(const std::string& my_rank_info);

  /// For the layer itself.
  const std::shared_ptr<internal::SeriesState>& state() const noexcept { return state_; }

  /// For bindings (the Python module's duck-typed communicators): rank `rank` of `size` ranks,
  /// with `allgather` (may be empty) gathering one string from every rank, as the MPI
  /// constructor does with its communicator.
  using Allgather = std::function<std::vector<std::string>(const std::string&)>;
  Series(const std::string& filepath, Access access, const std::string& options, int rank,
         int size, Allgather allgather);

 private:
#if openPMD_HAVE_MPI
  static int mpi_rank(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return rank;
  }
  static int mpi_size(MPI_Comm comm) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    return size;
  }
  static std::vector<std::string> mpi_allgather(MPI_Comm comm, const std::string& mine) {
    const int size = mpi_size(comm);
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
    std::vector<int> displacements(static_cast<std::size_t>(size));
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displacements[static_cast<std::size_t>(r)] = total;
      total += lengths[static_cast<std::size_t>(r)];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                   displacements.data(), MPI_CHAR, comm);
    std::vector<std::string> out;
    for (int r = 0; r < size; ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(displacements[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    }
    return out;
  }
#endif

  std::shared_ptr<internal::SeriesState> state_;
};

/// The file endings this build reads and writes ("sst", "ssc", "slip", "h5").
SLIPSTREAM_API std::vector<std::string> getFileExtensions();
/// The openPMD-api version this layer implements ("0.16.1").
SLIPSTREAM_API std::string getVersion();
/// The openPMD standard written ("1.1.0") and the oldest read ("1.0.0").
SLIPSTREAM_API std::string getStandard();
SLIPSTREAM_API std::string getStandardDefault();
SLIPSTREAM_API std::string getStandardMinimum();
/// What this build has: "mpi", "hdf5", "adios2" (streams), "slipstream".
SLIPSTREAM_API std::map<std::string, bool> getVariants();

}  // namespace openPMD
