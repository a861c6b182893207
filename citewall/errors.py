"""citewall's error hierarchy.

Messages name the bad value and the fix. ``UserError`` subclasses are the caller's mistake
(bad input, bad configuration); the others are runtime failures of a part. Mapping to HTTP
status codes happens only inside ``citewall.api``.
"""

from __future__ import annotations


class CitewallError(Exception):
    """Base of every error citewall raises on purpose."""


class UserError(CitewallError):
    """The caller's mistake: fix the input or the configuration and try again."""


class ConfigError(UserError):
    """A setting has a bad value (named in the message)."""


class IngestError(UserError):
    """A knowledge-base card or file was refused. Names the file, line and field."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None, field: str = ""):
        self.path = path
        self.line = line
        self.field = field
        #: The problem alone, without where (what a form shows beside the field).
        self.reason = message
        where = path
        if line is not None:
            where = f"{where}:{line}" if where else f"line {line}"
        prefix = f"{where}: " if where else ""
        suffix = f" (field {field!r})" if field else ""
        super().__init__(f"{prefix}{message}{suffix}")


class NotFoundError(UserError):
    """A named thing (conversation, card, user) does not exist or is not yours."""


class ConflictError(UserError):
    """The request does not fit the current state (e.g. nothing to answer again) (HTTP 409)."""


class AuthError(UserError):
    """Missing, malformed, unknown or revoked credentials."""


class PermissionDeniedError(UserError):
    """Authenticated, but the role may not do this."""


class LimitError(UserError):
    """A request is over a configured limit (message length, conversation length, rate)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None):
        self.retry_after_s = retry_after_s
        super().__init__(message)


class MessageTooLongError(LimitError):
    """The message is longer than ``max_message_chars`` (HTTP 413)."""


class ConversationFullError(LimitError):
    """The conversation already holds ``max_conversation_messages`` messages (HTTP 409)."""


class RateLimitedError(LimitError):
    """More requests than ``rate_limit_per_minute`` in the last 60 s (HTTP 429)."""


class RetrievalError(CitewallError):
    """A retrieval stage failed in a way that cannot be degraded around."""


class GenerationError(CitewallError):
    """The generator backend failed (timeout, HTTP error, unusable reply)."""


class StorageError(CitewallError):
    """The database could not be reached or the write failed (and was rolled back)."""


class ServiceUnavailableError(CitewallError):
    """A required part is down; the caller may retry later."""
