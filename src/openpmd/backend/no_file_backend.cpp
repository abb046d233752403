// The file backend of a build without HDF5: opening an HDF5 series says so.
#include "openPMD/Error.hpp"
#include "openpmd/backend/backend.hpp"
#include "openpmd/config.hpp"

namespace openPMD::internal {

std::unique_ptr<Backend> make_file_backend(const BackendTarget& target, const SeriesConfig&) {
  throw error::OperationUnsupportedInBackend(
      "HDF5", "series '" + target.path + "': this build of Slipstream has no HDF5 (install "
              "libhdf5-dev and rebuild); streams (.sst, .ssc, .slip) work");
}

}  // namespace openPMD::internal
