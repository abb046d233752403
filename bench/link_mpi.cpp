// MPI point-to-point over the link link_bench.py shapes (issue 30: the stream against MPI over
// the same link). Two ranks, one per host: rank 0 sends `--bytes` a step to rank 1, `--steps`
// steps a round, `--rounds` rounds; rank 1 prints one JSON line a round, {"variant": "mpi",
// "round": r, "steps_per_second": x}, timed from a barrier to its last receive. The bytes go as
// messages of at most 1 GiB (MPI counts are int).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"MPI point-to-point of a step's bytes between two ranks"};
  std::uint64_t bytes = 16u << 20;
  int steps = 20, rounds = 3;
  app.add_option("--bytes", bytes, "bytes a step")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "steps a round")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "rounds")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    MPI_Finalize();
    return code;
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "link_mpi: needs exactly 2 ranks, not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  constexpr std::uint64_t kMessage = std::uint64_t{1} << 30;
  std::vector<char> step(bytes, static_cast<char>(rank + 1));
  for (int round = 0; round < rounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int s = 0; s < steps; ++s) {
      for (std::uint64_t at = 0; at < bytes; at += kMessage) {
        const int count = static_cast<int>(std::min(kMessage, bytes - at));
        if (rank == 0) {
          MPI_Send(step.data() + at, count, MPI_CHAR, 1, s, MPI_COMM_WORLD);
        } else {
          MPI_Recv(step.data() + at, count, MPI_CHAR, 0, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
      }
    }
    const double seconds = MPI_Wtime() - start;
    if (rank == 1) {
      std::printf("{\"variant\": \"mpi\", \"round\": %d, \"steps_per_second\": %.6g}\n", round,
                  steps / seconds);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
