// slipstream-train CONFIG: the online trainer, one process per rank (`slipstream train CONFIG`
// runs it). Under mpirun (an MPI launcher's rank variables are set) and where it was built with
// MPI, the ranks are MPI_COMM_WORLD; otherwise it is one rank without MPI.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "train/trainer.hpp"

#ifdef SLIPSTREAM_HAVE_MPI
#include <mpi.h>
#endif

namespace {

bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int usage() {
  std::cerr << "usage: slipstream train CONFIG\n"
               "  Trains the model CONFIG names on its stream and publishes it (docs/training.md).\n"
               "  Under mpirun, each rank is one reader of the stream's group.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  if (argc != 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    return usage();
  }
  std::unique_ptr<slipstream::train::Collective> collective;
  bool mpi = false;
  if (started_by_mpi_launcher()) {
#ifdef SLIPSTREAM_HAVE_MPI
    MPI_Init(&argc, &argv);
    mpi = true;
    collective = slipstream::train::mpi_world();
#else
    std::cerr << "slipstream train: started by an MPI launcher, but built without MPI; "
                 "running as one rank\n";
#endif
  }
  if (!collective) collective = slipstream::train::single_process();
  int status = 0;
  try {
    slipstream::train::Trainer trainer(slipstream::train::load_train_config(argv[1]), *collective,
                                       &std::cout);
    trainer.run();
  } catch (const std::exception& e) {
    std::cerr << "slipstream train";
    if (collective->size() > 1) std::cerr << " (rank " << collective->rank() << ")";
    std::cerr << ": " << e.what() << "\n";
    status = 1;
#ifdef SLIPSTREAM_HAVE_MPI
    // An error on one rank only (a file it cannot read) would leave the others in a collective.
    if (mpi && collective->size() > 1) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  }
#ifdef SLIPSTREAM_HAVE_MPI
  if (mpi) MPI_Finalize();
#endif
  return status;
}
