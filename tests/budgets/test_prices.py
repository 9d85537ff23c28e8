"""The price table: costs of known token counts, prices from a file, and budgets merged run over agent over App."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_agents import Agent, App, ScriptedModel
from tempo_agents.budgets import DEFAULT_PRICES, Budget, ModelPrice, PriceTable, cost_nanos
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.openai_compatible.stream import cached_input_tokens_of


def test_published_prices_give_the_known_costs() -> None:
    gpt_4o = DEFAULT_PRICES["openai/gpt-4o"]
    # A million of each at $2.50 in and $10.00 out.
    assert cost_nanos(gpt_4o, 1_000_000, 1_000_000) == 12_500_000_000
    # 12,000 prompt tokens of which 10,000 cached ($1.25), 800 out: 2,000 x 2.5 + 10,000 x 1.25 + 800 x 10 per million.
    assert cost_nanos(gpt_4o, 12_000, 800, cached_input_tokens=10_000) == 5_000_000 + 12_500_000 + 8_000_000
    sonnet = DEFAULT_PRICES["anthropic/claude-sonnet-4-20250514"]
    # 3,000 in at $3, 1,000 cache reads at $0.30, 500 out at $15 (input counts the cache reads too).
    assert cost_nanos(sonnet, 4_000, 500, cached_input_tokens=1_000) == 9_000_000 + 300_000 + 7_500_000
    mini = DEFAULT_PRICES["openai/gpt-4o-mini"]
    assert cost_nanos(mini, 1, 1) == 750  # $0.15 + $0.60 per million: 750 billionths of a dollar, exactly


def test_cached_tokens_are_never_more_than_the_input_and_default_to_the_input_price() -> None:
    price = ModelPrice(input=1.0, output=2.0)
    assert cost_nanos(price, 100, 0, cached_input_tokens=100) == cost_nanos(price, 100, 0)
    assert cost_nanos(ModelPrice(input=1.0, output=0, cached_input=0.5), 10, 0, cached_input_tokens=50) == 5_000


def test_a_price_file_replaces_and_adds_models_over_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"openai/gpt-4o": {"input": 5, "output": 20}, "local-llm": {"input": 0, "output": 0}}))
    table = PriceTable.from_file(path)
    assert table.price("openai", "gpt-4o") == ModelPrice(input=5, output=20)
    assert table.price("openai-compatible", "local-llm") == ModelPrice(input=0, output=0)
    assert table.price("anthropic", "claude-opus-4-20250514") == DEFAULT_PRICES["anthropic/claude-opus-4-20250514"]
    assert table.price("openai", "unknown") is None
    path.write_text("[1, 2]")
    with pytest.raises(ConfigurationError, match="must be a JSON object"):
        PriceTable.from_file(path)


def test_budgets_merge_limit_by_limit_run_over_agent_over_app() -> None:
    agent = Agent(
        id="a",
        model=ScriptedModel([]),
        default_options={"budget": {"run": {"tokens": 500}, "resource": {"day": {"costUsd": 2.0}}}},
    )
    app = App(
        agents=[agent],
        store="sqlite:///:memory:",
        budget=Budget.model_validate({"resource": {"day": {"tokens": 9_000}, "month": {"costUsd": 40}}}),
    )
    options, _ = app.build_options(agent, {"budget": {"run": {"tokens": 100}, "on_exceeded": "wait"}})
    assert options.budget == Budget.model_validate(
        {
            "run": {"tokens": 100},
            "resource": {"day": {"tokens": 9_000, "costUsd": 2.0}, "month": {"costUsd": 40}},
            "onExceeded": "wait",
        }
    )
    plain, _ = App(agents=[Agent(id="b", model=ScriptedModel([]))], store="sqlite:///:memory:").build_options(
        Agent(id="b", model=ScriptedModel([])), {}
    )
    assert plain.budget is None


def test_the_openai_usage_names_its_cached_prompt_tokens() -> None:
    raw = {"prompt_tokens": 1200, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 1024}}
    assert cached_input_tokens_of(raw) == 1024
    assert cached_input_tokens_of({"prompt_tokens": 5}) == 0
    assert cached_input_tokens_of({"input_tokens_details": {"cached_tokens": True}}) == 0
