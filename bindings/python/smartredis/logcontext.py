"""LogContext: a named context for log lines that are not about a Client or Dataset."""

from smartredis.srobject import SRObject

__all__ = ["LogContext"]


class LogContext(SRObject):
    def __init__(self, context: str) -> None:
        super().__init__(context)
