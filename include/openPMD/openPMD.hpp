// Slipstream's openPMD-api compatible layer: programs written for openPMD-api include this one
// header and run on Slipstream streams and HDF5 files (docs/openpmd.md).
#pragma once

#include "openPMD/Attributable.hpp"
#include "openPMD/Attribute.hpp"
#include "openPMD/Container.hpp"
#include "openPMD/Dataset.hpp"
#include "openPMD/Datatype.hpp"
#include "openPMD/Error.hpp"
#include "openPMD/Iteration.hpp"
#include "openPMD/Record.hpp"
#include "openPMD/RecordComponent.hpp"
#include "openPMD/Series.hpp"
#include "openPMD/config.hpp"
