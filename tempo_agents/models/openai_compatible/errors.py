"""How an OpenAI-compatible call fails: every failure a :class:`~tempo_agents.errors.ModelError` that says whether
another attempt can help.

Whether a status or a failed connection is worth another attempt is the adapters' shared rule
(``models/provider_http/failure_classes.py``): rate limits (with the server's ``Retry-After``), 408, 409, 5xx,
timeouts, refused and dropped connections, a failed proxy are retried; 400, 401, 403, 404, a base URL that
cannot be called, a request that cannot be sent are not. This provider's own word: an exhausted quota
(``insufficient_quota``) is a 429 not worth retrying. A damaged event is retried, and so is an error event that
looks transient. Messages name the model and its endpoint, quote the server briefly and end with the outlook
(``models/_error_text.py``).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Protocol

import httpx

from tempo_agents.errors import ConfigurationError, ModelError
from tempo_agents.models._error_text import (
    MAY_SUCCEED_LATER,
    capitalized,
    clipped,
    quoted_start,
    retry_outlook,
    without_full_stop,
)
from tempo_agents.models.provider_http import (
    TransportFailure,
    is_transient_status,
    retry_after_seconds,
    retryable_status,
)

__all__ = ["CallFailures", "CalledModel", "ErrorDetail", "json_or_none"]


class CalledModel(Protocol):
    """What the errors read of the model they are about (an ``OpenAICompatibleModel``)."""

    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    @property
    def api_key_env(self) -> str | None: ...

    @property
    def timeout(self) -> httpx.Timeout: ...

    @property
    def base_url(self) -> str: ...

    @property
    def endpoint(self) -> str: ...


class CallFailures:
    """The errors of one model's calls (read from the model when they are made: the base URL may come from
    the environment)."""

    def __init__(self, model: CalledModel) -> None:
        self._target = model
        self._provider = model.provider
        self._model = model.model_id
        self._api_key_env = model.api_key_env
        self._timeout = model.timeout

    def missing_key(self) -> ModelError:
        """No key in the environment variable the model reads it from."""
        return ModelError(
            f"{self.describe()}: no API key: the environment variable {self._api_key_env} is not set "
            f"on the worker. Set {self._api_key_env} in the worker's environment"
            + ("" if self._provider == "openai" else ", or pass api_key_env=None for a server without keys"),
            retryable=False,
            provider=self._provider,
            model=self._model,
        )

    def describe(self) -> str:
        """``<provider> model "<model>" at <endpoint>``: how every message of this model begins."""
        try:
            where = self._target.endpoint
        except ConfigurationError:
            where = "OPENAI_BASE_URL"
        return f'{self._provider} model "{self._model}" at {where}'

    def _key_hint(self) -> str:
        return f"the API key in {self._api_key_env}" if self._api_key_env else "the server's authentication settings"

    def status_error(self, response: httpx.Response, *, web_search: bool) -> ModelError:
        status = response.status_code
        detail = ErrorDetail.parse(json_or_none(response.text), fallback=response.text)
        retryable = retryable_status(status, False if detail.out_of_quota(status) else None)
        advice = self._status_advice(status, detail, retryable, web_search=web_search)
        return ModelError(
            f"{self.describe()}: {_status_text(status, response.reason_phrase, detail.message)}. {advice}.",
            retryable=retryable,
            provider=self._provider,
            model=self._model,
            status=status,
            retry_after=retry_after_seconds(response.headers) if retryable else None,
        )

    def _status_advice(self, status: int, detail: ErrorDetail, retryable: bool, *, web_search: bool) -> str:
        """What to tell the user after HTTP ``status`` (``retryable``: a later attempt may succeed)."""
        if detail.out_of_quota(status):
            return f"The account has no quota left: check the plan and billing of {self._key_hint()}"
        if retryable:
            meaning = _RETRYABLE_STATUS_ADVICE.get(status, "The server failed or is overloaded")
            return f"{meaning}; {MAY_SUCCEED_LATER}"
        if status == 401:
            return f"Check {self._key_hint()}: it is missing, wrong or revoked"
        if status == 403:
            key = capitalized(self._key_hint())
            return f"{key} is not allowed to use model {self._model!r} (or this endpoint)"
        if status == 404:
            return (
                f"Check the model name {self._model!r} and the base URL {self._target.base_url} "
                "(it should end in /v1 for most servers)"
            )
        if web_search and status == 400:
            return (
                "Web search on Chat Completions needs a search model such as gpt-4o-search-preview; "
                "otherwise check the request's messages, tools and model settings"
            )
        return "The request was rejected; check the messages, tools and model settings"

    def transport_error(self, error: httpx.HTTPError) -> ModelError:
        """The error for a failed connection or body; raise it ``from None`` (keep Temporal's failure small)."""
        failure = TransportFailure.of(error)
        what = self._transport_text(failure, error)
        return ModelError(
            f"{self.describe()}: {what}; {MAY_SUCCEED_LATER}." if failure.retryable else f"{self.describe()}: {what}.",
            retryable=failure.retryable,
            provider=self._provider,
            model=self._model,
        )

    def _transport_text(self, failure: TransportFailure, error: httpx.HTTPError) -> str:
        """What went wrong, in the middle of the message (the outlook follows a transient failure)."""
        said = clipped(str(error) or type(error).__name__, 200)
        if failure is TransportFailure.CONNECT_TIMEOUT:
            return f"could not connect within {self._timeout.connect:g}s"
        if failure is TransportFailure.READ_TIMEOUT:
            return f"no data from the server for {self._timeout.read:g}s (stalled stream)"
        if failure is TransportFailure.TIMEOUT:
            return f"timed out ({type(error).__name__})"
        if failure is TransportFailure.PROXY:
            return f"the proxy failed ({said}); check the proxy settings if it goes on"
        if failure is TransportFailure.CONNECT:
            return f"could not connect ({said}); check that the server is up"
        if failure is TransportFailure.UNDECODABLE:
            return f"the response body could not be decoded ({said})"
        if failure is TransportFailure.DROPPED:
            return f"the connection dropped ({said})"
        if failure is TransportFailure.UNSENDABLE:
            return f"the request could not be sent ({said}). Check the model's headers and the base URL"
        return f"{without_full_stop(clipped(str(error)))}. Check the base URL and proxy settings"

    def stream_error(self, payload: Any) -> ModelError:
        detail = ErrorDetail.parse(payload, fallback=json.dumps(payload)[:500])
        retryable = detail.looks_transient()
        said = without_full_stop(clipped(detail.message)) or "unknown error"
        return ModelError(
            f"{self.describe()}: the server reported an error mid-stream: {said} ({retry_outlook(retryable)}).",
            retryable=retryable,
            provider=self._provider,
            model=self._model,
            status=detail.status,
        )

    def malformed_event_error(self, data: str) -> ModelError:
        """A ``data:`` event that is not JSON: the stream is damaged, so this attempt's answer cannot be trusted."""
        return ModelError(
            f"{self.describe()}: the stream is broken: an event is not JSON: {quoted_start('data: ' + data)}; "
            f"{MAY_SUCCEED_LATER}.",
            retryable=True,
            provider=self._provider,
            model=self._model,
        )

    def incomplete_error(self) -> ModelError:
        return ModelError(
            f"{self.describe()}: the connection closed before the response was complete; {MAY_SUCCEED_LATER}.",
            retryable=True,
            provider=self._provider,
            model=self._model,
        )


@dataclass
class ErrorDetail:
    message: str
    type: str
    code: str
    status: int | None

    @classmethod
    def parse(cls, payload: Any, *, fallback: str) -> ErrorDetail:
        error: Any = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, str):
            return cls(error, "", "", None)
        if not isinstance(error, dict):
            # vLLM's older top-level form {"object": "error", "message": ...}, FastAPI's {"detail": ...}
            error = payload if isinstance(payload, dict) else {"message": fallback.strip()[:500]}
        message = error.get("message") or error.get("detail") or ""
        if not isinstance(message, str):
            message = json.dumps(message)[:500]
        raw_code = error.get("code")
        status = raw_code if isinstance(raw_code, int) and not isinstance(raw_code, bool) else None
        if status is None and isinstance(error.get("status"), int):
            status = error["status"]
        return cls(message.strip(), str(error.get("type") or ""), "" if raw_code is None else str(raw_code), status)

    def out_of_quota(self, status: int) -> bool:
        """A 429 for an exhausted quota: waiting does not cure it (this provider's own word on retrying)."""
        return status == 429 and "insufficient_quota" in (self.code, self.type)

    def looks_transient(self) -> bool:
        if self.status is not None and is_transient_status(self.status):
            return True
        kind = f"{self.type} {self.code}".lower()
        if any(mark in kind for mark in ("server", "overload", "rate_limit", "timeout", "unavailable", "internal")):
            return True
        text = self.message.lower()
        return any(
            mark in text for mark in ("overloaded", "server error", "try again", "temporarily", "timed out", "capacity")
        )


_RETRYABLE_STATUS_ADVICE = {
    408: "The server timed out waiting for the request",
    409: "The server reported a conflict",
    429: "Rate limited by the server",
}
"""What the statuses below 500 that another attempt may get past mean."""


def _status_text(status: int, reason_phrase: str, provider_said: str) -> str:
    """``HTTP 429 Too Many Requests: <what the server said>``, without empty parts or a final full stop."""
    phrase = reason_phrase.strip()
    if not phrase:
        with contextlib.suppress(ValueError):
            phrase = HTTPStatus(status).phrase  # HTTP/2 has no reason phrases
    text = f"HTTP {status} {phrase}" if phrase else f"HTTP {status}"
    said = without_full_stop(clipped(provider_said))
    return f"{text}: {said}" if said else text


def json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
