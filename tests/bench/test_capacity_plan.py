"""The capacity plan (docs/concepts/capacity-plan.md) is what ``bench/capacity.py`` derives from the per-run figures
the page quotes: the page's plan block is exactly the lines ``derive_plan`` gives for the page's figures, and the
derivation itself adds up (rates, shards, sizes, processes, the first bottleneck) for figures worked by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench._capacity_plan import Assumptions, PerRun, Workload, derive_plan, plan_lines

PAGE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "capacity-plan.md"


def _blocks(marker: str) -> list[str]:
    """The fenced blocks of the page that follow an HTML comment ``<!-- marker -->``."""
    pattern = rf"<!-- {re.escape(marker)} -->\s*```[a-z]*\n(.*?)```"
    return re.findall(pattern, PAGE.read_text(encoding="utf-8"), re.S)


def _page_pairs() -> list[tuple[str, str]]:
    figures, plans = _blocks("capacity per-run"), _blocks("capacity plan")
    assert figures and len(figures) == len(plans), "each quoted set of per-run figures has its plan beside it"
    return list(zip(figures, plans, strict=True))


@pytest.mark.parametrize("figures, plan", _page_pairs())
def test_the_page_quotes_the_plan_its_figures_derive(figures: str, plan: str) -> None:
    per_run = PerRun(**json.loads(figures))
    assert plan_lines(derive_plan(per_run)) == plan.rstrip("\n").splitlines()


def test_the_plan_adds_up_for_figures_worked_by_hand() -> None:
    per_run = PerRun(
        actions=12.0,
        state_transitions=40.0,
        history_events=50.0,
        history_bytes=20_000.0,
        store_row_writes=100.0,
        store_bytes=50_000.0,
        worker_cpu_ms=70.0,
        api_cpu_ms=14.0,
        waiting_bytes=30_000.0,
        idle_stream_kb=50.0,
    )
    workload = Workload(runs_per_day=864_000, waiting_approvals=100_000, watchers=10_000, peak_factor=3.0)
    plan = derive_plan(per_run, workload, Assumptions())
    assert plan.mean_runs_per_s == pytest.approx(10.0)
    assert plan.peak_runs_per_s == pytest.approx(30.0)
    assert plan.actions_per_s_mean == pytest.approx(120.0)
    assert plan.actions_per_s_peak == pytest.approx(360.0)
    assert plan.transitions_per_s_peak == pytest.approx(1_200.0)
    assert plan.history_shards == 512  # 1,200 / 20 = 60 shards asked for: the production floor of 512 holds
    assert plan.store_writes_per_s_peak == pytest.approx(3_000.0)
    assert plan.store_gb_per_day == pytest.approx(43.2)  # 50 kB x 864,000
    assert plan.waiting_gb == pytest.approx(3.0)  # 30 kB x 100,000
    assert plan.store_gb_held == pytest.approx(43.2 * 30 + 3.0)
    assert plan.history_gb_held == pytest.approx(17.28 * 7 + 3.0)
    assert plan.workers == 3  # 70 ms x 30 runs/s = 2.1 cores, at 70 % = 3 workers
    assert (plan.api_servers_for_cpu, plan.api_servers_for_streams, plan.api_servers) == (1, 10, 10)
    assert plan.stream_memory_mb == pytest.approx(500.0)
    first = plan.first_bottleneck
    assert first.name.startswith("the store's PostgreSQL primary")
    assert first.load == pytest.approx(0.3)  # 3,000 of 10,000 row writes/s
    assert first.runs_per_day_at_ceiling == pytest.approx(864_000 / 0.3)


def test_shards_grow_past_the_floor_when_the_rate_asks_and_can_become_the_first_bottleneck() -> None:
    per_run = PerRun(
        actions=10.0,
        state_transitions=400.0,
        history_events=300.0,
        history_bytes=1.0,
        store_row_writes=10.0,
        store_bytes=1.0,
        worker_cpu_ms=1.0,
        api_cpu_ms=1.0,
        waiting_bytes=1.0,
        idle_stream_kb=1.0,
    )
    plan = derive_plan(per_run, Workload(runs_per_day=8_640_000, peak_factor=1.0))
    assert plan.transitions_per_s_peak == pytest.approx(40_000.0)
    assert plan.history_shards == 2048  # 40,000 / 20 = 2,000 shards, rounded up to a power of two
    assert plan.first_bottleneck.name == "Temporal's 2048 history shards (state transitions/s)"
