"""HTTP errors: every failure is JSON ``{"error": "..."}`` with a status that says whose fault it is.

The official client retries any 5xx (POSTs included), so everything that can be the caller's fault is
answered with a 4xx before any work starts, and only genuine server faults are 5xx.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.errors import (
    ConfigurationError,
    ErasedRunError,
    IdTooLongError,
    MessageTooLargeError,
    ResumeError,
    ResumeValidationError,
    RunFinishedError,
    RunNotFoundError,
    StoreUnavailableError,
    ThreadBusyError,
    ToolNotFoundError,
)
from tempo_agents.workflows import resume_errors

__all__ = [
    "ERROR_RESPONSES",
    "STORE_RETRY_AFTER_SECONDS",
    "TEMPORAL_UNAVAILABLE",
    "ApiError",
    "ErrorBody",
    "install_error_handlers",
    "resume_error_status",
    "store_unavailable_response",
    "temporal_unavailable_response",
]

_log = logging.getLogger("tempo_agents.server")

_RESUME_STATUS = {
    resume_errors.NO_SNAPSHOT_FOUND: 404,
    resume_errors.AGENT_MISMATCH: 404,
    resume_errors.NOT_SUSPENDED: 409,
    resume_errors.TOOL_CALL_NOT_SUSPENDED: 409,
    resume_errors.AMBIGUOUS_TOOL_CALL: 409,
    resume_errors.INVALID_APPROVAL: 422,
    resume_errors.INVALID_RESUME_DATA: 422,
    resume_errors.NOT_AN_APPROVER: 403,
    resume_errors.INVALID_ARGS: 422,
}


class ErrorBody(BaseModel):
    """Every error answer: ``error`` says what went wrong; some carry more (``issues``, ``validationErrors``,
    ``code``)."""

    model_config = ConfigDict(extra="allow")

    error: str


def _error(description: str) -> dict[str, Any]:
    # Always JSON, also on routes whose success is an event stream (so no ``model``, which would take the route's
    # media type).
    return {"description": description, "content": {"application/json": {"schema": ErrorBody.model_json_schema()}}}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _error("The request is invalid (its body, query or path)"),
    401: _error("No token, or an unknown one"),
    403: _error("Refused by the server's authorize hook"),
    404: _error("No such agent, tool or run"),
    409: _error("The run or call is not in a state that allows this"),
    413: _error(
        "The request body is larger than the server accepts (1 MiB unless configured otherwise), or a message larger "
        "than a thread carries (code MESSAGE_TOO_LARGE)"
    ),
    422: _error("Refused data (resume data against its schema, a failing tool)"),
    503: _error("The store's database or Temporal cannot be reached now; try again after Retry-After seconds"),
}
"""The errors every route may answer, for the OpenAPI document (the official client retries 5xx: a 503 is the one
a retry may cure)."""

STORE_RETRY_AFTER_SECONDS = 5
"""The ``Retry-After`` of a 503 answered while the store's database cannot be reached."""


class ApiError(Exception):
    """An error answered as ``{"error": message, **extra}`` with ``status``."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra

    def response(self) -> JSONResponse:
        """The JSON response for this error."""
        return JSONResponse({"error": self.message, **self.extra}, status_code=self.status)


def resume_error_status(code: str) -> int:
    """The status of a refused resume, by the reference's error id."""
    return _RESUME_STATUS.get(code, 409)


def api_error_from(error: Exception) -> ApiError | None:
    """The HTTP form of an error the core raises for a caller's mistake (``None``: not one of those)."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, ResumeValidationError):
        errors = error.result.get("validationErrors") if isinstance(error.result, dict) else None
        return ApiError(422, error.message, validationErrors=errors)
    if isinstance(error, ResumeError):
        return ApiError(resume_error_status(error.code), error.message, code=error.code)
    if isinstance(error, RunNotFoundError):
        return ApiError(404, error.message)
    if isinstance(error, ThreadBusyError):
        return ApiError(409, error.message, code=error.code, activeRunId=error.active_run_id)
    if isinstance(error, RunFinishedError | ErasedRunError):
        return ApiError(409, error.message, code=error.code, runId=error.run_id)
    if isinstance(error, MessageTooLargeError):
        return ApiError(413, error.message, code=error.code, limit=error.limit)
    if isinstance(error, IdTooLongError):
        return ApiError(400, error.message, code=error.code, limit=error.limit)
    if isinstance(error, ToolNotFoundError):
        return ApiError(404, "Tool not found")
    if isinstance(error, ConfigurationError):
        return ApiError(400, error.message)
    return None


def _issues(errors: Sequence[Any]) -> list[dict[str, str]]:
    issues = []
    for error in errors:
        location = [str(part) for part in error.get("loc", ())[1:]]
        if error.get("type") == "json_invalid":
            field, message = "body", str(error.get("ctx", {}).get("error", error.get("msg", "Invalid JSON")))
        else:
            field, message = ".".join(location) or "root", str(error.get("msg", "Invalid input"))
        issues.append({"field": field, "message": message})
    return issues


async def _on_api_error(_: Request, error: Exception) -> JSONResponse:
    found = api_error_from(error)
    assert found is not None
    return found.response()


async def _on_validation_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    errors = error.errors()
    in_query = any(e.get("loc", ("",))[0] in ("query", "path", "header") for e in errors)
    title = "Invalid query parameters" if in_query else "Invalid request body"
    return JSONResponse({"error": title, "issues": _issues(errors)}, status_code=400)


async def _on_http_exception(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    return JSONResponse({"error": str(error.detail)}, status_code=error.status_code, headers=error.headers)


def store_unavailable_response(error: StoreUnavailableError) -> JSONResponse:
    """A 503 for a store that cannot be reached (or whose pool is busy): JSON, ``Retry-After``, and the connection
    kept (the answer is whole, so the client may send its next request on it)."""
    return JSONResponse(
        {"error": error.message, "code": error.code},
        status_code=503,
        headers={"retry-after": str(STORE_RETRY_AFTER_SECONDS)},
    )


TEMPORAL_UNAVAILABLE = "TEMPORAL_UNAVAILABLE"
"""The code of a 503 answered while Temporal does not answer (down, overloaded, or slower than the call's deadline)."""
_TRANSIENT_RPC = {
    RPCStatusCode.UNAVAILABLE,
    RPCStatusCode.DEADLINE_EXCEEDED,
    RPCStatusCode.RESOURCE_EXHAUSTED,
    RPCStatusCode.CANCELLED,
}


def temporal_unavailable_response(error: RPCError) -> JSONResponse:
    """A 503 for a Temporal call that failed in a way a later attempt may not: ``Retry-After`` as for the store."""
    return JSONResponse(
        {"error": f"Temporal did not answer ({error.status.name}: {error.message})", "code": TEMPORAL_UNAVAILABLE},
        status_code=503,
        headers={"retry-after": str(STORE_RETRY_AFTER_SECONDS)},
    )


async def _on_rpc_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RPCError)
    if error.status in _TRANSIENT_RPC:
        _log.warning("answered 503: Temporal did not answer (%s): %s", error.status.name, error.message)
        return temporal_unavailable_response(error)
    return await _on_unexpected(request, error)


async def _on_store_unavailable(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StoreUnavailableError)
    _log.warning("answered 503: %s", error.message)
    return store_unavailable_response(error)


async def _on_unexpected(_: Request, error: Exception) -> JSONResponse:
    found = api_error_from(error)
    if found is not None:
        return found.response()
    if isinstance(error, StoreUnavailableError):  # raised from a middleware, outside the routes' handlers
        return store_unavailable_response(error)
    _log.exception("unhandled error in the HTTP API")
    # The server closes the connection after an unhandled error: say so, so the client does not send its next
    # request on a connection that is going away.
    return JSONResponse({"error": str(error) or type(error).__name__}, status_code=500, headers={"connection": "close"})


def install_error_handlers(api: FastAPI) -> None:
    """Answer every error as JSON ``{"error": ...}``."""
    for kind in (
        ApiError,
        ResumeError,
        RunNotFoundError,
        RunFinishedError,
        ErasedRunError,
        ThreadBusyError,
        MessageTooLargeError,
        IdTooLongError,
        ToolNotFoundError,
        ConfigurationError,
    ):
        api.add_exception_handler(kind, _on_api_error)
    api.add_exception_handler(RequestValidationError, _on_validation_error)
    api.add_exception_handler(HTTPException, _on_http_exception)
    api.add_exception_handler(StoreUnavailableError, _on_store_unavailable)
    api.add_exception_handler(RPCError, _on_rpc_error)
    api.add_exception_handler(Exception, _on_unexpected)
