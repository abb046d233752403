"""openPMD-api's Python API (openpmd_api 0.16) over Slipstream's openPMD layer.

Programs written for openPMD-api run unchanged on Slipstream streams (name.sst, .ssc, .slip)
and HDF5 files (name.h5, name_%T.h5):

    import numpy as np
    import openpmd_api as io

    series = io.Series("simData.sst", io.Access.create,
                       '{"slipstream": {"address": "tcp://127.0.0.1:6780"}}')
    iteration = series.write_iterations()[0]
    E_x = iteration.meshes["E"]["x"]
    E_x.reset_dataset(io.Dataset(np.dtype("float64"), [100]))
    E_x[()] = np.arange(100.0)
    iteration.close()
    series.close()

The compiled part is openpmd_api.openpmd_api_cxx, a pybind11 module over libslipstream_openpmd.
This package lives in an opt-in directory (<prefix>/lib/slipstream/python): put that directory on
PYTHONPATH to use it, so that it never shadows a real openPMD-api installed in site-packages.
Every call that may wait or do I/O releases the GIL.
"""

from . import openpmd_api_cxx as cxx
from .openpmd_api_cxx import *  # noqa: F401,F403
from .openpmd_api_cxx import (  # noqa: F401 (names that * leaves out or that are re-set here)
    Access,
    Access_Type,
    Datatype,
    Error,
    Iteration_Encoding,
    Series,
    Unit_Dimension,
    determine_datatype,
)

__version__ = "0.16.1"
file_extensions = list(cxx.file_extensions)
variants = dict(cxx.variants)
