"""Both adapters hold every class of failure to one rule: a later attempt may succeed, or it may not, alike.

Each case fails a call of the OpenAI-compatible adapter and one of the Anthropic adapter the same way, against
the real local servers that speak their wire formats (one of them also plays a proxy that refuses the tunnel),
and both errors must say the same about retrying. A provider's own word on one response (Anthropic's
``x-should-retry``, OpenAI's ``insufficient_quota``) is that provider's alone: each adapter's tests hold it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, TypeAlias

import httpx
import pytest

from tempo_agents.errors import ModelError
from tempo_agents.models.anthropic import AnthropicModel
from tempo_agents.models.messages import Message, TextPart
from tempo_agents.models.model import Model, ModelRequest
from tempo_agents.models.openai_compatible import OpenAICompatibleModel, openai_compatible
from tests.support.provider_servers.anthropic_server import AnthropicServer, JSONResponse, MessageStream
from tests.support.provider_servers.anthropic_server import error_response as anthropic_error
from tests.support.provider_servers.openai_server import (
    Cut,
    Drop,
    OpenAIServer,
    Reply,
    Stall,
    chunk,
    error_event,
    error_reply,
    text_stream,
)

pytestmark = pytest.mark.timeout(30)

KEY_ENV = "TEMPO_TEST_PROVIDER_KEY"


@dataclasses.dataclass
class Providers:
    """The two servers, and the models of a case (each built for one call)."""

    openai: OpenAIServer
    anthropic: AnthropicServer
    clients: AsyncExitStack

    async def client(self, **options: Any) -> httpx.AsyncClient:
        """An HTTP client of the case's own (a proxy, redirects followed), closed after the test."""
        return await self.clients.enter_async_context(httpx.AsyncClient(**options))

    def openai_model(
        self,
        *,
        base_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        headers: dict[str, str] | None = None,
        read_timeout: float = 5.0,
    ) -> OpenAICompatibleModel:
        return openai_compatible(
            "gpt-test",
            base_url=base_url or self.openai.base_url,
            api_key_env=KEY_ENV,
            client=client,
            headers=headers,
            read_timeout=read_timeout,
        )

    def claude_model(
        self,
        *,
        base_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        headers: dict[str, str] | None = None,
        read_timeout: float = 5.0,
    ) -> AnthropicModel:
        return AnthropicModel(
            "claude-test",
            base_url=base_url or self.anthropic.base_url,
            api_key_env=KEY_ENV,
            http_client=client,
            headers=headers,
            read_timeout=read_timeout,
        )


Case: TypeAlias = Callable[[Providers], Awaitable[tuple[Model, Model]]]
"""Scripts both servers for one class of failure; the OpenAI-compatible model and the Anthropic one to call."""


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
async def providers() -> AsyncIterator[Providers]:
    async with OpenAIServer() as openai, AnthropicServer() as anthropic, AsyncExitStack() as clients:
        yield Providers(openai, anthropic, clients)


def request() -> ModelRequest:
    return ModelRequest(run_id="run-1", step=0, messages=[Message(role="user", content=[TextPart(text="hi")])])


async def failure(model: Model) -> ModelError:
    with pytest.raises(ModelError) as caught:
        async for _ in model.stream(request()):
            pass
    return caught.value


# --- HTTP statuses -----------------------------------------------------------------------------------------------


TRANSIENT = (408, 409, 429, 500, 502, 503, 529)
FINAL = (400, 401, 403, 404, 413, 422)


@pytest.mark.parametrize(
    ("status", "retryable"), [*((status, True) for status in TRANSIENT), *((status, False) for status in FINAL)]
)
async def test_a_status_is_retried_alike(providers: Providers, status: int, retryable: bool) -> None:
    providers.openai.script(error_reply(status, "it failed"))
    providers.anthropic.script(
        anthropic_error(status, "api_error" if retryable else "invalid_request_error", "it failed")
    )
    for error in (await failure(providers.openai_model()), await failure(providers.claude_model())):
        assert (error.retryable, error.status) == (retryable, status), error.message


# --- failed connections and bodies -------------------------------------------------------------------------------


async def refused(providers: Providers) -> tuple[Model, Model]:
    async with OpenAIServer() as gone_openai, AnthropicServer() as gone_anthropic:
        openai_url, anthropic_url = gone_openai.base_url, gone_anthropic.base_url
    return providers.openai_model(base_url=openai_url), providers.claude_model(base_url=anthropic_url)


async def stalled(providers: Providers) -> tuple[Model, Model]:
    providers.openai.script(Reply(events=[chunk({"content": "Hel"}), Stall(10)]))
    providers.anthropic.script(MessageStream().text("Hel").stall(10).text("lo").finish().build())
    return providers.openai_model(read_timeout=0.3), providers.claude_model(read_timeout=0.3)


async def dropped(providers: Providers) -> tuple[Model, Model]:
    providers.openai.script(Reply(events=[chunk({"content": "Hel"}), Drop()]))
    providers.anthropic.script(MessageStream().text("Hel").drop().build())
    return providers.openai_model(), providers.claude_model()


async def proxy_refuses(providers: Providers) -> tuple[Model, Model]:
    """Each server as the proxy of an https endpoint: it answers the tunnel's ``CONNECT`` with an error."""
    providers.openai.script(error_reply(502, "upstream unreachable"))  # the reply to CONNECT
    through_openai = await providers.client(proxy=f"http://127.0.0.1:{providers.openai.port}")
    through_anthropic = await providers.client(proxy=providers.anthropic.base_url)  # a 404 to CONNECT
    return (
        providers.openai_model(base_url="https://provider.invalid/v1", client=through_openai),
        providers.claude_model(base_url="https://provider.invalid", client=through_anthropic),
    )


async def undecodable(providers: Providers) -> tuple[Model, Model]:
    """A body that says it is gzip and is not."""
    gzip = {"content-encoding": "gzip"}
    providers.openai.script(dataclasses.replace(text_stream("hi"), headers=gzip))
    providers.anthropic.script(MessageStream().text("hi").finish().build(headers=gzip))
    return providers.openai_model(), providers.claude_model()


async def unsendable(providers: Providers) -> tuple[Model, Model]:
    """A header value the client refuses to send (a line break in it)."""
    bad = {"x-trace": "one\ntwo"}
    return providers.openai_model(headers=bad), providers.claude_model(headers=bad)


async def redirected_to_ftp(providers: Providers) -> tuple[Model, Model]:
    """A redirect, followed, to a URL whose scheme cannot be called."""
    providers.openai.script(Reply(status=307, body={}, headers={"location": "ftp://127.0.0.1/v1/chat/completions"}))
    providers.anthropic.script(JSONResponse(307, {}, {"location": "ftp://127.0.0.1/v1/messages"}))
    follows = await providers.client(follow_redirects=True)
    return providers.openai_model(client=follows), providers.claude_model(client=follows)


async def redirected_too_often(providers: Providers) -> tuple[Model, Model]:
    providers.openai.script(Reply(status=307, body={}, headers={"location": providers.openai.base_url}))
    providers.anthropic.script(JSONResponse(307, {}, {"location": providers.anthropic.base_url}))
    follows = await providers.client(follow_redirects=True, max_redirects=0)
    return providers.openai_model(client=follows), providers.claude_model(client=follows)


async def damaged_event(providers: Providers) -> tuple[Model, Model]:
    providers.openai.script(Reply(events=[chunk({"content": "Hel"}), Cut(chunk({"content": "lo"}), keep=30)]))
    providers.anthropic.script(MessageStream().text(["Hel", "lo"]).cut(-1, keep=30).finish().build())
    return providers.openai_model(), providers.claude_model()


async def cut_short(providers: Providers) -> tuple[Model, Model]:
    """A whole body whose answer never finished."""
    providers.openai.script(Reply(events=[chunk({"content": "Hel"})]))
    providers.anthropic.script(MessageStream().text("Hel").build())
    return providers.openai_model(), providers.claude_model()


async def overloaded_event(providers: Providers) -> tuple[Model, Model]:
    providers.openai.script(
        Reply(events=[chunk({"content": "Hel"}), error_event("Overloaded", type="overloaded_error")])
    )
    providers.anthropic.script(MessageStream().text("Hel").error("overloaded_error", "Overloaded").build())
    return providers.openai_model(), providers.claude_model()


async def refused_request_event(providers: Providers) -> tuple[Model, Model]:
    bad = error_event("prompt is too long", type="invalid_request_error")
    providers.openai.script(Reply(events=[chunk({"content": "Hel"}), bad]))
    providers.anthropic.script(MessageStream().text("Hel").error("invalid_request_error", "prompt is too long").build())
    return providers.openai_model(), providers.claude_model()


@pytest.mark.parametrize(
    ("case", "retryable"),
    [
        (refused, True),
        (stalled, True),
        (dropped, True),
        (proxy_refuses, True),
        (undecodable, True),
        (damaged_event, True),
        (cut_short, True),
        (overloaded_event, True),
        (unsendable, False),
        (redirected_to_ftp, False),
        (redirected_too_often, False),
        (refused_request_event, False),
    ],
    ids=lambda value: value.__name__ if callable(value) else None,
)
async def test_a_failure_is_retried_alike(providers: Providers, case: Case, retryable: bool) -> None:
    openai, claude = await case(providers)
    for error in (await failure(openai), await failure(claude)):
        assert error.retryable is retryable, error.message
        shown_context = None if error.__suppress_context__ else error.__context__
        assert error.__cause__ is None and shown_context is None  # no httpx chain for Temporal to keep
