"""Anthropic adapter: ``anthropic/<model>`` over the streaming Messages API, spoken directly with httpx.

Mapping, in short (see :class:`AnthropicModel` for the details):

* our ``system`` messages become the top-level ``system`` string (joined with blank lines, wherever they stood);
  ``user`` text becomes ``text`` blocks; assistant text and tool calls become ``text`` and ``tool_use`` blocks;
  our ``tool`` messages become ``user`` messages of ``tool_result`` blocks; consecutive messages of one role
  are merged, as the API needs user/assistant alternation.
* a :class:`ToolDefinition` with ``kind="web_search"`` becomes the server tool
  ``{"type": "web_search_20250305", "name": "web_search"}``; its ``server_tool_use`` block is reported as a
  ``ToolCallEvent(provider_executed=True)`` and its ``web_search_tool_result`` block as a ``ToolResultEvent``
  whose ``result`` is the block's raw ``content`` (kept whole, so it can be sent back in a later turn).
* stop reasons: ``end_turn``/``stop_sequence`` → ``stop``, ``max_tokens`` and
  ``model_context_window_exceeded`` → ``length``, ``tool_use`` → ``tool-calls``, ``refusal`` →
  ``content-filter``, ``pause_turn`` (a long server-tool turn the caller may continue) and anything
  unknown → ``other``.
* usage: ``input_tokens`` counts the whole prompt (``input_tokens`` + cache creation + cache reads) from
  ``message_start``, updated by ``message_delta`` when it repeats them; ``output_tokens`` is the cumulative
  count of the last ``message_delta``.

Errors classify themselves as :class:`ModelError`, by the rule both adapters share
(``models/provider_http/failure_classes.py``): 408, 409, 429 (with ``retry-after``), 5xx, 529, timeouts
(including a stream that stalls for ``read_timeout`` seconds), refused or dropped connections, a failed proxy, a
damaged (non-JSON) event and ``overloaded_error``/``api_error`` events mid-stream are ``retryable``; a missing
key, 400, 401, 403, 404, 413 are not. The adapter never retries on its own: the model-step activity's retry
policy does. Errors wrapping httpx errors are raised ``from None`` and quote the server briefly, so the
failure Temporal records for a retried attempt stays within its size limit and keeps the reason.

The package: ``adapter.py`` (:class:`AnthropicModel`: configuration, headers, the streamed request),
``factory.py`` (``anthropic``, ``from_model_string``), ``wire.py`` (the request body), ``stream.py`` (stream
events as model events), ``errors.py`` (every failure as a :class:`ModelError`, retryable or not). The event
stream decoding, ``Retry-After``, the connection pool and which failures are retried are the adapters' shared HTTP
layer (``models/provider_http/``).
"""

from tempo_agents.models.anthropic.adapter import DEFAULT_BASE_URL, AnthropicModel
from tempo_agents.models.anthropic.factory import anthropic, from_model_string
from tempo_agents.models.anthropic.wire import DEFAULT_MAX_TOKENS, WEB_SEARCH_TOOL_TYPE, build_request_body

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "WEB_SEARCH_TOOL_TYPE",
    "AnthropicModel",
    "anthropic",
    "build_request_body",
    "from_model_string",
]
