"""How an Anthropic call fails: every failure a :class:`~tempo_agents.errors.ModelError` that says whether another
attempt can help.

Whether a status, an error event's type or a failed connection is worth another attempt is the adapters' shared
rule (``models/provider_http/failure_classes.py``): 408, 409, 429 (with ``retry-after``), 5xx and 529, timeouts (a
stream that stalls for ``read_timeout`` seconds too), refused and dropped connections, a failed proxy,
``overloaded_error`` / ``api_error`` events mid-stream are retried; a missing key, 400, 401, 403, 404, 413 are not.
This provider's own word: the API's ``x-should-retry`` header overrules the status. A damaged (non-JSON) event is
retried. Messages begin with ``anthropic/<model>:`` and end with the outlook (``models/_error_text.py``).
"""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from tempo_agents.errors import ModelError
from tempo_agents.models._error_text import MAY_SUCCEED_LATER, clipped, quoted_start, retry_outlook, without_full_stop
from tempo_agents.models.anthropic.wire import PROVIDER
from tempo_agents.models.provider_http import (
    TransportFailure,
    is_transient_status,
    retry_after_seconds,
    retryable_status,
)

__all__ = ["CallFailures", "CalledModel"]

_ERROR_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status each error type stands for (an error event is retried as its status would be)."""


class CalledModel(Protocol):
    """What the errors read of the model they are about (an ``AnthropicModel``)."""

    api_key_env: str
    timeout: httpx.Timeout

    @property
    def model_id(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    @property
    def messages_url(self) -> str: ...


class CallFailures:
    """The errors of one model's calls (its base URL is read when an error is made: it may come from the
    environment)."""

    def __init__(self, model: CalledModel) -> None:
        self._target = model
        self._model = model.model_id

    def error(
        self, message: str, *, retryable: bool, status: int | None = None, retry_after: float | None = None
    ) -> ModelError:
        return ModelError(
            f"{PROVIDER}/{self._model}: {message}",
            retryable=retryable,
            provider=PROVIDER,
            model=self._model,
            status=status,
            retry_after=retry_after,
        )

    def missing_key(self) -> ModelError:
        return self.error(
            f"no API key: the environment variable {self._target.api_key_env} is not set on this worker. Set it in "
            "the worker's environment (keys are never taken from workflow inputs).",
            retryable=False,
        )

    def transport_error(self, exc: httpx.HTTPError) -> ModelError:
        """The error for a failed connection or body; raise it ``from None`` (keep Temporal's failure small)."""
        failure = TransportFailure.of(exc)
        what = self._transport_text(failure, exc)
        if failure.retryable:
            return self.error(f"{what}; {MAY_SUCCEED_LATER}", retryable=True)
        return self.error(what, retryable=False)

    def _transport_text(self, failure: TransportFailure, exc: httpx.HTTPError) -> str:
        """What went wrong (the outlook follows a transient failure)."""
        base_url, messages_url = self._target.base_url, self._target.messages_url
        said = clipped(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, 200)
        if failure is TransportFailure.CONNECT_TIMEOUT:
            return f"timed out connecting to {base_url}"
        if failure is TransportFailure.READ_TIMEOUT:
            return f"timed out: no data from {base_url} for {self._target.timeout.read} s (stalled stream)"
        if failure is TransportFailure.TIMEOUT:
            return f"timed out talking to {base_url} ({type(exc).__name__})"
        if failure in (TransportFailure.UNSUPPORTED_URL, TransportFailure.UNSENDABLE):
            return f"cannot call {messages_url}: {said}; check base_url / ANTHROPIC_BASE_URL"
        if failure in (TransportFailure.PROXY, TransportFailure.CONNECT, TransportFailure.DROPPED):
            return f"connection to {base_url} failed or was dropped ({said})"
        if failure is TransportFailure.UNDECODABLE:
            return f"the response body from {messages_url} could not be decoded ({said})"
        return f"bad response from {messages_url}: {said}"  # too many redirects, ...

    def status_error(self, response: httpx.Response) -> ModelError:
        """The error for a response that is not an event stream (an HTTP error, or a 200 of something else)."""
        status = response.status_code
        error_type, detail = _error_detail(response)
        request_id = response.headers.get("request-id")
        where = f" (request-id {request_id})" if request_id else ""
        retry_after = retry_after_seconds(response.headers)
        if status == 200:
            if error_type:
                return self.event_error(error_type, detail)
            return self.error(
                f"expected an event stream from {self._target.messages_url} but got "
                f"{response.headers.get('content-type') or 'no content type'}{where}; check base_url",
                retryable=False,
            )
        said = without_full_stop(detail)
        label = f"HTTP {status}" + (f" {error_type}" if error_type else "") + (f": {said}" if said else "")
        retryable = retryable_status(status, _should_retry(response.headers))
        hint = self._status_hint(status, error_type, retry_after)
        return self.error(
            f"{label}{where}; {hint}; {retry_outlook(retryable)}",
            retryable=retryable,
            status=status,
            retry_after=retry_after if retryable else None,
        )

    def _status_hint(self, status: int, error_type: str, retry_after: float | None) -> str:
        """What HTTP ``status`` means for the user (whether to retry is said separately)."""
        key_env = self._target.api_key_env
        if status == 401:
            return f"check that {key_env} on the worker holds a valid Anthropic API key"
        if status == 403:
            return f"the key in {key_env} is not allowed to use this model or feature"
        if status == 404:
            return f'check the model name "{self._model}" (anthropic/<model>) and the base URL {self._target.base_url}'
        if status == 402:
            return "check the billing of the Anthropic account"
        if status == 408:
            return "the server timed out waiting for the request"
        if status == 409:
            return "the server reported a conflict"
        if status == 413:
            return "the request is too large; shorten the conversation or tool results"
        if status == 429:
            return "rate limited" + (f"; retry after {retry_after:g} s" if retry_after is not None else "")
        if status == 529 or error_type == "overloaded_error":
            return "the API is overloaded"
        if status >= 500:
            return "server error"
        return "fix the request (messages, tools or settings)"

    def event_error(self, error_type: str, detail: str) -> ModelError:
        """The :class:`ModelError` for an ``error`` event (``status`` is the type's HTTP equivalent)."""
        status = _ERROR_TYPE_STATUS.get(error_type)
        retryable = status is not None and is_transient_status(status)
        text = f"{error_type}: {without_full_stop(clipped(detail))}" if detail else error_type
        return self.error(
            f"error event mid-stream: {text}; {retry_outlook(retryable)}", retryable=retryable, status=status
        )

    def broken_event(self, event_name: str, data_text: str) -> ModelError:
        """A damaged event: this attempt's answer cannot be trusted, but a new stream may be whole."""
        bad_line = quoted_start(f"data: {data_text}")
        return self.error(
            f"the stream is broken: a {event_name or 'stream'} event is not JSON: {bad_line}; {MAY_SUCCEED_LATER}",
            retryable=True,
        )

    def ended_early(self) -> ModelError:
        return self.error(
            f"the response stream ended before message_stop (connection dropped mid-stream); {MAY_SUCCEED_LATER}",
            retryable=True,
        )


def _should_retry(headers: httpx.Headers) -> bool | None:
    """The API's own word on retrying this response (``x-should-retry: true|false``), else ``None``."""
    should_retry = headers.get("x-should-retry")
    return should_retry == "true" if should_retry in ("true", "false") else None


def _error_detail(response: httpx.Response) -> tuple[str, str]:
    """``(error type, message)`` of an error response body, as far as it can be read."""
    try:
        payload = response.json()
    except ValueError:
        return "", clipped(response.text)
    error = _as_dict(_as_dict(payload).get("error"))
    if error:
        return str(error.get("type") or ""), clipped(str(error.get("message") or ""))
    return "", clipped(response.text)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
