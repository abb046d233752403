"""SRObject: the base of the objects that can be a logging context (Client, Dataset,
LogContext)."""

from smartredis import logger

__all__ = ["SRObject"]


class SRObject:
    def __init__(self, context: str) -> None:
        if not isinstance(context, str):
            raise TypeError(f"Argument provided for context, {type(context)}, is not of type str")
        self._context = context

    def get_context(self) -> str:
        return self._context

    def log_data(self, level, data: str) -> None:
        logger.log_data(self, level, data)

    def log_warning(self, level, data: str) -> None:
        logger.log_warning(self, level, data)

    def log_error(self, level, data: str) -> None:
        logger.log_error(self, level, data)
