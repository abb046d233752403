"""SmartRedis's Python exceptions, and the translation of Slipstream's errors into them.

As SmartRedis: bad arguments raise ValueError, wrong types TypeError, a missing key
RedisKeyError, a timeout RedisTimeoutError, an unreachable server RedisConnectionError (when
connecting) or RedisDatabaseError, a refused request RedisRuntimeError; all Redis*Error classes
derive from RedisReplyError (a RuntimeError) except RedisConnectionError. A key holding another
kind of value raises RedisTypeError, both a TypeError and (as the server's refusal is in
SmartRedis) a RedisRuntimeError.
"""

import functools
import os

import slipstream

__all__ = [
    "RedisConnectionError",
    "RedisReplyError",
    "RedisRuntimeError",
    "RedisBadAllocError",
    "RedisDatabaseError",
    "RedisInternalError",
    "RedisTimeoutError",
    "RedisKeyError",
    "RedisTypeError",
]


class RedisConnectionError(RuntimeError):
    def __init__(self, cpp_error: str = "") -> None:
        message = cpp_error
        if "SSDB" in os.environ:
            message += ("\n" if message else "") + \
                f"Could not connect to database at {os.environ['SSDB']}"
        super().__init__(message)


class RedisReplyError(RuntimeError):
    def __init__(self, cpp_error: str, method: str = "", key: str = "") -> None:
        del key  # SmartRedis's argument, unused in its messages too
        super().__init__(f"{method} execution failed\n{cpp_error}" if method else cpp_error)


class RedisRuntimeError(RedisReplyError):
    pass


class RedisBadAllocError(RedisReplyError):
    pass


class RedisDatabaseError(RedisReplyError):
    pass


class RedisInternalError(RedisReplyError):
    pass


class RedisTimeoutError(RedisReplyError):
    pass


class RedisKeyError(RedisReplyError):
    pass


class RedisTypeError(RedisRuntimeError, TypeError):
    """A key that holds another kind of value (a script where a tensor was asked for ...)."""


def translated(error, method=""):
    """The SmartRedis exception for a Slipstream one (other exceptions are returned as they are)."""
    message = str(error)
    if isinstance(error, (slipstream.InvalidArgumentError, slipstream.BufferTooSmallError)):
        return ValueError(f"{method}: {message}" if method else message)
    if isinstance(error, slipstream.WrongTypeError):
        return RedisTypeError(message, method)
    if isinstance(error, slipstream.KeyNotFoundError):
        return RedisKeyError(message, method)
    if isinstance(error, slipstream.TimeoutError):
        return RedisTimeoutError(message, method)
    if isinstance(error, (slipstream.ConnectionError, slipstream.AuthError,
                          slipstream.OutOfMemoryError)):
        return RedisDatabaseError(message, method)
    if isinstance(error, slipstream.ProtocolError):
        return RedisInternalError(message, method)
    if isinstance(error, slipstream.SlipstreamError):
        return RedisRuntimeError(message, method)
    return error


def exception_handler(func):
    """Raises the SmartRedis exception for any Slipstream error `func` raises."""

    @functools.wraps(func)
    def smartredis_api_wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except slipstream.SlipstreamError as error:
            raise translated(error, func.__name__) from None

    return smartredis_api_wrapper
