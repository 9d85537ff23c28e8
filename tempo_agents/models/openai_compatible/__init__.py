"""OpenAI Chat Completions adapter, for ``openai/<model>`` and any OpenAI-compatible server.

One adapter covers OpenAI itself and the servers that speak its streaming Chat Completions wire format
(vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, ...)::

    from_model_string("openai/gpt-4o")        # OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY
    openai_compatible("llama3.1", base_url="http://localhost:11434/v1", api_key_env=None)
    local_model("llama3.1", "ollama")         # the same, at the server's default address

The adapter streams ``POST {base_url}/chat/completions`` with ``stream: true`` over httpx and turns the
server-sent events into :mod:`tempo_agents.models.model` events. It never retries: every failure is a
:class:`~tempo_agents.errors.ModelError` that says whether retrying can help (rate limits, 408, 409, 5xx,
timeouts, refused or dropped connections, a failed proxy, a damaged event in the stream) or not (missing key,
400, 401, 403, 404), by the rule both adapters share (``models/provider_http/failure_classes.py``), and the
model-step activity's retry policy does the rest. Errors that wrap httpx errors are raised without them
(``from None``) and messages quote the server briefly, so Temporal can record the reason for a retry within
its size limit for an activity failure. The API key is read from the worker's environment on every call and
never enters a request.

Wire choices that keep local servers working: an assistant message always carries ``content`` as a string
(``""`` beside tool calls, as llama.cpp and LM Studio reject ``null``); the output limit is sent as
``max_completion_tokens`` to api.openai.com and as ``max_tokens`` to any other server, whatever the
provider label; a legacy ``function_call`` delta is read as a tool call when the stream has no ``tool_calls``.

Built-in web search (a :class:`ToolDefinition` with ``kind="web_search"``): Chat Completions has no
``web_search`` *tool*. For provider ``openai`` (or a base URL on ``api.openai.com``) the definition is
dropped from ``tools`` and the request gets ``web_search_options: {}`` instead (provider defaults), which
OpenAI's search models (``gpt-4o-search-preview``, ``gpt-4o-mini-search-preview``, ``gpt-5-search-api``)
use to search on the provider side; other OpenAI models reject the parameter with a 400, reported as a
non-retryable error that says to use a search model. The ``url_citation`` annotations such a model returns
are surfaced as one provider-executed ``ToolCallEvent`` + ``ToolResultEvent`` (``{"sources": [...]}``) named
after the web-search tool. Any other provider raises :func:`web_search_unsupported`.

The package: ``adapter.py`` (:class:`OpenAICompatibleModel`: configuration, headers, the streamed request),
``factory.py`` (``openai_compatible``, ``local_model``, ``from_model_string``), ``wire.py`` (our messages,
tools and settings in the Chat Completions request), ``stream.py`` (the answer's chunks as model events),
``errors.py`` (every failure as a :class:`~tempo_agents.errors.ModelError`, retryable or not). The event
stream decoding, ``Retry-After``, the connection pool and which failures are retried are the adapters' shared HTTP
layer (``models/provider_http/``).
"""

from tempo_agents.models.openai_compatible.adapter import DEFAULT_OPENAI_BASE_URL, OpenAICompatibleModel
from tempo_agents.models.openai_compatible.factory import (
    LOCAL_SERVER_URLS,
    LocalServer,
    from_model_string,
    local_model,
    openai_compatible,
)
from tempo_agents.models.openai_compatible.wire import messages_to_openai
from tempo_agents.models.web_search import WEB_SEARCH_UNSUPPORTED_PROVIDER, web_search_unsupported

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "LOCAL_SERVER_URLS",
    "WEB_SEARCH_UNSUPPORTED_PROVIDER",
    "LocalServer",
    "OpenAICompatibleModel",
    "from_model_string",
    "local_model",
    "messages_to_openai",
    "openai_compatible",
    "web_search_unsupported",
]
