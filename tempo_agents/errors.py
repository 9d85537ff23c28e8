"""Exceptions raised by tempo-agents.

Every error carries a stable ``code`` (the reference's error id where one exists, such as
``AGENT_TOOL_NAME_COLLISION``) so callers can branch on it without matching message text.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "ErasedRunError",
    "IdTooLongError",
    "MessageTooLargeError",
    "ModelError",
    "ResumeError",
    "ResumeValidationError",
    "RunFinishedError",
    "RunNotFoundError",
    "StoreBusyError",
    "StoreUnavailableError",
    "SupersededStartError",
    "TempoAgentsError",
    "ThreadBusyError",
    "ToolNameCollisionError",
    "ToolNotFoundError",
]


class TempoAgentsError(Exception):
    """Base class of every error this package raises on purpose."""

    code: str = "TEMPO_AGENTS_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class ConfigurationError(TempoAgentsError):
    """Something in how agents, tools or the app were set up is wrong; retrying cannot help."""

    code = "CONFIGURATION_ERROR"


class ToolNameCollisionError(ConfigurationError):
    """Two tools of one agent sanitise to the same model-visible name."""

    code = "AGENT_TOOL_NAME_COLLISION"


class ToolNotFoundError(TempoAgentsError):
    """A tool id or name that no agent or app knows."""

    code = "TOOL_NOT_FOUND"


class RunNotFoundError(TempoAgentsError):
    """No run with the given id exists."""

    code = "RUN_NOT_FOUND"


class ErasedRunError(TempoAgentsError):
    """The run ``run_id`` was erased on request, and nothing more is written under its id: a write of an activity
    that was still working when the erasure stopped the run is refused (it may not bring back what was deleted), and
    so is a new run that names the erased run's id. Nothing was written or started. HTTP 409."""

    code = "RUN_ERASED"

    def __init__(self, run_id: str) -> None:
        super().__init__(f'run "{run_id}" was erased on request: nothing more is written under its id')
        self.run_id = run_id


class RunFinishedError(TempoAgentsError):
    """A steer or an interrupt for a run that finishes (or finished) without another model step; nothing was
    delivered, so its sender may start a new run instead. ``run_id`` names the run."""

    code = "RUN_FINISHED"

    def __init__(self, message: str, *, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


class ResumeError(TempoAgentsError):
    """A resume, approval or decline was refused; the run is unchanged and stays as it was.

    ``code`` is the reference's error id (``AGENT_RESUME_AMBIGUOUS_TOOL_CALL`` …).
    """

    code = "AGENT_RESUME_ERROR"


class ResumeValidationError(ResumeError):
    """The resume data does not match the tool's ``resume_schema``; ``result`` is the validation result."""

    code = "AGENT_RESUME_INVALID_DATA"

    def __init__(self, message: str, result: dict[str, object]) -> None:
        super().__init__(message)
        self.result = result


class ModelError(TempoAgentsError):
    """A model provider call failed.

    ``retryable`` errors (rate limits, 5xx, timeouts, dropped connections, broken streams) may succeed
    on a later attempt, and the model-step activity's retry policy decides whether there is one; the
    others (missing key, 400, 401, 403, 404) fail the run at once. ``retry_after`` is the provider's
    hint in seconds, when it gave one.

    The message is kept short (at most :attr:`MAX_MESSAGE_CHARS` characters, cut with an ellipsis):
    Temporal stores an activity's last failure in a few kilobytes, and adapters raise this error
    without the transport errors chained to it, so the reason for a retry stays readable there.
    """

    code = "MODEL_ERROR"
    MAX_MESSAGE_CHARS = 1000

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        provider: str,
        model: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        if len(message) > self.MAX_MESSAGE_CHARS:
            message = message[: self.MAX_MESSAGE_CHARS - 1] + "…"
        super().__init__(message)
        self.retryable = retryable
        self.provider = provider
        self.model = model
        self.status = status
        self.retry_after = retry_after


class StoreUnavailableError(TempoAgentsError, ConnectionError):
    """The store's database could not be reached (or the connection broke) and retrying for a while did not
    help. The message names the store's URL without its password. Retryable: an activity that raises it is
    tried again later, as for any lost connection."""

    code = "STORE_UNAVAILABLE"


class StoreBusyError(StoreUnavailableError):
    """The database answers, but every connection of the store's pool stayed in use for the pool's whole wait:
    the pool is too small for the load, not the database down. The message says how to size the pool.
    Retryable like :class:`StoreUnavailableError` (and answered 503 over HTTP)."""

    code = "STORE_BUSY"


class ThreadBusyError(TempoAgentsError):
    """A message sent with the ``reject`` strategy to a thread whose run is active: nothing started.
    ``active_run_id`` is the run that holds the thread."""

    code = "THREAD_BUSY"

    def __init__(self, message: str, *, active_run_id: str | None) -> None:
        super().__init__(message)
        self.active_run_id = active_run_id


class SupersededStartError(TempoAgentsError):
    """A write of a local activity's start was refused: a later start of the same call was counted meanwhile
    (its workflow task timed out while this start still ran, and the next task started the call again). The
    superseded start stops here; the later one owns the call's journal and outcome."""

    code = "SUPERSEDED_START"


class MessageTooLargeError(TempoAgentsError):
    """A message for a thread that is larger than a thread carries (``size`` bytes as sent, at most ``limit``):
    nothing was sent, the thread is untouched. HTTP 413."""

    code = "MESSAGE_TOO_LARGE"

    def __init__(self, message: str, *, size: int | None = None, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class IdTooLongError(TempoAgentsError):
    """A thread id, resource id or run id that would make a workflow id longer than Temporal allows (``limit``
    characters): nothing was sent. HTTP 400."""

    code = "ID_TOO_LONG"

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit
