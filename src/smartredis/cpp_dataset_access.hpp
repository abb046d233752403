// How the C++ Client reaches the slipstream::DataSet inside a SmartRedis::DataSet.
#pragma once

#include "dataset.h"
#include "slipstream/dataset.hpp"

namespace slipstream::smartredis {

struct DataSetAccess {
  static const DataSet& native(const SmartRedis::DataSet& dataset);
  static SmartRedis::DataSet wrap(DataSet dataset);
};

}  // namespace slipstream::smartredis
