"""SmartRedis 0.6's Python API over Slipstream: `from smartredis import Client, Dataset` works
unchanged against a Slipstream server.

A thin layer over the `slipstream` package: Client, Dataset, ConfigOptions, LogContext,
DatasetConverter (smartredis.dataset_utils, xarray) and the log functions keep SmartRedis's
names, arguments and errors (smartredis.error; smartredis.util has Dtypes), and read the same
environment (SSDB, SR_DB_TYPE, SSKEYIN, SSKEYOUT, SR_LOG_FILE, SR_LOG_LEVEL). See
docs/smartredis.md for what differs.
"""

from smartredis.client import Client
from smartredis.configoptions import ConfigOptions
from smartredis.dataset import Dataset
from smartredis.dataset_utils import DatasetConverter
from smartredis.logger import LLDebug, LLDeveloper, LLInfo, LLQuiet, log_data, log_error, log_warning
from smartredis.logcontext import LogContext
from smartredis.srobject import SRObject
from smartredis import util

__all__ = [
    "Client",
    "ConfigOptions",
    "Dataset",
    "DatasetConverter",
    "SRObject",
    "LogContext",
    "log_data",
    "log_warning",
    "log_error",
    "LLQuiet",
    "LLInfo",
    "LLDebug",
    "LLDeveloper",
]
