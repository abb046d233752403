"""LogContext: a named context for log lines that are not about a Client or Dataset."""

from smartredis.logger import LLDebug
from smartredis.srobject import SRObject

__all__ = ["LogContext"]


class LogContext(SRObject):
    def __init__(self, context: str) -> None:
        """A context whose log lines carry `context` (TypeError if it is not a str); logs its
        creation at LLDebug, as SmartRedis does."""
        super().__init__(context)
        self.log_data(LLDebug, "New LogContext created")
