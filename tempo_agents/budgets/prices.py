"""Prices per model: what a step's tokens cost, in US dollars per million tokens.

The defaults are the list prices the providers published on their pricing pages (openai.com/api/pricing,
anthropic.com/pricing) as of :data:`PRICES_PUBLISHED`, for a few model ids only; prices change, so pass your own
(``App(prices=...)``, a JSON file named by ``TEMPO_AGENTS_PRICES`` or ``tempo-agents worker --prices``). A model
with no price costs nothing, and a run whose budget limits cost fails instead of spending unmetered money.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from tempo_agents._wire import WireModel
from tempo_agents.errors import ConfigurationError

__all__ = ["DEFAULT_PRICES", "PRICES_ENV", "PRICES_PUBLISHED", "ModelPrice", "PriceTable", "cost_nanos"]

PRICES_PUBLISHED = "2025-06-01"
"""The date the default prices were read from the providers' pricing pages."""

PRICES_ENV = "TEMPO_AGENTS_PRICES"
"""A JSON file of prices (``{"openai/gpt-4o": {"input": 2.5, "output": 10, "cachedInput": 1.25}}``) that
replaces or adds to the defaults."""


class ModelPrice(WireModel):
    """US dollars per million input, output and cached input tokens (``cached_input``: ``None`` is the input
    price). Cached input tokens are the part of the input the provider read from its prompt cache."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    # OpenAI, as published on PRICES_PUBLISHED.
    "openai/gpt-4o": ModelPrice(input=2.50, cached_input=1.25, output=10.00),
    "openai/gpt-4o-mini": ModelPrice(input=0.15, cached_input=0.075, output=0.60),
    "openai/gpt-4.1": ModelPrice(input=2.00, cached_input=0.50, output=8.00),
    "openai/gpt-4.1-mini": ModelPrice(input=0.40, cached_input=0.10, output=1.60),
    # Anthropic, as published on PRICES_PUBLISHED (cached input: a cache read).
    "anthropic/claude-sonnet-4-20250514": ModelPrice(input=3.00, cached_input=0.30, output=15.00),
    "anthropic/claude-opus-4-20250514": ModelPrice(input=15.00, cached_input=1.50, output=75.00),
    "anthropic/claude-3-5-haiku-20241022": ModelPrice(input=0.80, cached_input=0.08, output=4.00),
}
"""Default prices by ``provider/model``, as published on :data:`PRICES_PUBLISHED`."""

_NANOS_PER_TOKEN_AT_ONE_USD_PER_MILLION = Decimal(1000)
"""One US dollar per million tokens is a thousand billionths of a dollar per token."""


def cost_nanos(price: ModelPrice, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0) -> int:
    """What the tokens cost, in billionths of a US dollar (rounded half up). ``input_tokens`` counts the cached
    ones too (as both providers' usage does here), which are charged at the cached price instead."""
    cached = min(max(cached_input_tokens, 0), input_tokens)
    cached_price = price.input if price.cached_input is None else price.cached_input
    total = (
        Decimal(input_tokens - cached) * Decimal(str(price.input))
        + Decimal(cached) * Decimal(str(cached_price))
        + Decimal(output_tokens) * Decimal(str(price.output))
    ) * _NANOS_PER_TOKEN_AT_ONE_USD_PER_MILLION
    return int(total.to_integral_value(rounding="ROUND_HALF_UP"))


class PriceTable:
    """Prices by model id: ``provider/model`` (``openai/gpt-4o``) or the bare model id, the defaults under
    the ones given."""

    def __init__(self, prices: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None, *, defaults: bool = True):
        self._prices: dict[str, ModelPrice] = dict(DEFAULT_PRICES) if defaults else {}
        for model, price in (prices or {}).items():
            self._prices[model] = price if isinstance(price, ModelPrice) else ModelPrice.model_validate(price)

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        """Prices from a JSON object of ``model id → {"input", "output", "cachedInput"}``, over the defaults."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"cannot read the price table {path}: {error}") from None
        if not isinstance(data, dict):
            raise ConfigurationError(f"the price table {path} must be a JSON object of model id to price")
        return cls(data)

    @classmethod
    def from_environment(cls) -> PriceTable:
        """The defaults, with the file named by ``TEMPO_AGENTS_PRICES`` over them when it is set."""
        path = os.environ.get(PRICES_ENV)
        return cls.from_file(path) if path else cls()

    def price(self, provider: str, model_id: str) -> ModelPrice | None:
        return self._prices.get(f"{provider}/{model_id}") or self._prices.get(model_id)

    def prices(self) -> dict[str, ModelPrice]:
        return dict(self._prices)
