"""SmartRedis's logging: lines "<context>@<UTC time>:<text>" appended to SR_LOG_FILE (standard
output when unset) when their level is at most SR_LOG_LEVEL (QUIET, INFO, DEBUG, DEVELOPER;
INFO when unset). The same format and variables as the C++, C and Fortran layers, so a
program's languages can share one log file. The variables are read at the first log call.
"""

import datetime
import enum
import os
import sys
import threading

__all__ = ["LLQuiet", "LLInfo", "LLDebug", "LLDeveloper", "log_data", "log_warning", "log_error"]


class SRLoggingLevel(enum.IntEnum):
    LLQuiet = 1
    LLInfo = 2
    LLDebug = 3
    LLDeveloper = 4


LLQuiet = SRLoggingLevel.LLQuiet
LLInfo = SRLoggingLevel.LLInfo
LLDebug = SRLoggingLevel.LLDebug
LLDeveloper = SRLoggingLevel.LLDeveloper

_LEVELS = {"quiet": LLQuiet, "info": LLInfo, "debug": LLDebug, "developer": LLDeveloper}
_lock = threading.Lock()
_settings = None  # (file path or None, level), read once


def _configured():
    global _settings
    if _settings is None:
        path = os.environ.get("SR_LOG_FILE") or None
        text = os.environ.get("SR_LOG_LEVEL", "")
        level = _LEVELS.get(text.strip().lower(), LLInfo)
        _settings = (path, level)
        if text and text.strip().lower() not in _LEVELS:
            _write("SmartRedis", f"WARNING: SR_LOG_LEVEL '{text}' is not QUIET, INFO, DEBUG or "
                   "DEVELOPER; logging at INFO")
    return _settings


def _write(context, text):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    line = f"{context}@{stamp}:{text}\n"
    path = _settings[0] if _settings else None
    with _lock:
        try:
            if path:
                with open(path, "a", encoding="utf-8") as log:
                    log.write(line)
            else:
                sys.stdout.write(line)
                sys.stdout.flush()
        except OSError:
            pass  # logging never fails a call


def _log(context, level, text):
    if not isinstance(level, int) or isinstance(level, bool):
        raise TypeError(f"level must be a logging level (LLQuiet ... LLDeveloper), not {level!r}")
    if not isinstance(text, str):
        raise TypeError(f"data must be a str, not {type(text).__name__}")
    _, configured = _configured()
    if configured == LLQuiet or level == LLQuiet or level > configured:
        return
    context_name = context.get_context() if hasattr(context, "get_context") else str(context)
    _write(context_name, text)


def log_data(context, level, data):
    """Writes `data` under `context` (a str or an SRObject) when `level` is enabled."""
    _log(context, level, data)


def log_warning(context, level, data):
    _log(context, level, "WARNING: " + data)


def log_error(context, level, data):
    _log(context, level, "ERROR: " + data)
