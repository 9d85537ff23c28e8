"""The capacity plan of ``bench/capacity.py``: from what one run costs (measured) to what a deployment needs for a
workload (1,000,000 runs a day, 100,000 approvals waiting, 10,000 people watching by default).

A pure function, :func:`derive_plan`, so the page that quotes the plan (docs/concepts/capacity-plan.md) and the
test that checks it compute the same thing the bench prints. Every number the plan does not measure is a field of
:class:`Assumptions`, with the reason for its default.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Assumptions", "Bottleneck", "PerRun", "Plan", "Workload", "derive_plan", "plan_lines"]

SECONDS_PER_DAY = 86_400
GB = 1e9


@dataclass(frozen=True)
class PerRun:
    """What one run costs, as ``bench/capacity.py`` measures it (means over its runs)."""

    actions: float
    """Temporal actions, estimated from the run's history events by type (Temporal Cloud's billing unit)."""
    state_transitions: float
    """Temporal state transitions, estimated from the history: what a history shard writes one at a time."""
    history_events: float
    history_bytes: float
    """Serialized size of the run's history events (protobuf), what Temporal's persistence keeps per run."""
    store_row_writes: float
    """Rows the tempo-agents store writes (inserted, updated, deleted) for one run."""
    store_bytes: float
    """Bytes the store grows by for one closed run (tables and indexes)."""
    worker_cpu_ms: float
    api_cpu_ms: float
    waiting_bytes: float
    """Bytes held for one run waiting for an approval: its store rows and its history so far."""
    idle_stream_kb: float
    """API server memory per open, idle SSE stream (``bench/many_watchers.py``'s figure, not remeasured here)."""


@dataclass(frozen=True)
class Workload:
    """What the deployment must carry."""

    runs_per_day: int = 1_000_000
    waiting_approvals: int = 100_000
    watchers: int = 10_000
    peak_factor: float = 3.0
    """The busiest second over the day's mean: traffic follows office hours, so plan for three times the mean."""


@dataclass(frozen=True)
class Assumptions:
    """What the plan takes as given rather than measures."""

    target_utilisation: float = 0.7
    """Workers and API servers are planned to be this busy at peak, so a lost machine or a burst has room."""
    cores_per_worker: float = 1.0
    """A worker is one Python process: one event loop, one core of useful CPU."""
    cores_per_api_server: float = 1.0
    """An API server is one Python process too."""
    streams_per_api_server: int = 1_000
    """Open SSE streams one API server is planned to carry (issue 40's goal for one server)."""
    transitions_per_shard_per_s: float = 20.0
    """State transitions one history shard is planned to take a second. A shard writes one update at a time; at a
    few milliseconds per database write it manages a few hundred; 20 leaves room for retries, timers and the
    waiting runs' own writes."""
    min_history_shards: int = 512
    """Shards are fixed when the cluster is created, so start where Temporal's operators start a production cluster
    and grow only if the rate asks for more."""
    store_row_writes_per_s: float = 10_000.0
    """Row writes a second one PostgreSQL primary is planned to take for the store's small rows (commits batched by
    the server's WAL writer, on SSDs)."""
    store_retention_days: float = 30.0
    """How long closed runs' records are kept. ``Retention``'s default keeps them for ever; 30 days is what the
    retention page's example keeps, and the plan also prints the growth per day."""
    temporal_retention_days: float = 7.0
    """The namespace's retention of closed workflows' histories."""


@dataclass(frozen=True)
class Bottleneck:
    """A part that does not grow by adding machines, how busy the workload makes it, and the runs a day at which
    it reaches its planned ceiling."""

    name: str
    load: float
    """Peak demand over planned capacity: 1.0 is the ceiling."""
    runs_per_day_at_ceiling: float


@dataclass(frozen=True)
class Plan:
    """What a deployment needs for a workload."""

    mean_runs_per_s: float
    peak_runs_per_s: float
    actions_per_s_mean: float
    actions_per_s_peak: float
    actions_per_day: float
    transitions_per_s_peak: float
    history_shards: int
    history_gb_per_day: float
    history_gb_held: float
    """Temporal's histories kept: closed runs for the namespace retention, plus the waiting runs."""
    store_writes_per_s_mean: float
    store_writes_per_s_peak: float
    store_gb_per_day: float
    store_gb_held: float
    """The store at the retention assumed, plus the waiting runs."""
    waiting_gb: float
    workers: int
    api_servers: int
    api_servers_for_cpu: int
    api_servers_for_streams: int
    stream_memory_mb: float
    bottlenecks: list[Bottleneck] = field(default_factory=list)
    """Ordered, busiest first: the first is the first bottleneck."""

    @property
    def first_bottleneck(self) -> Bottleneck:
        return self.bottlenecks[0]

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "first_bottleneck": self.first_bottleneck.name}


def _power_of_two_at_least(value: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(value, 1.0))))


def _processes(cpu_ms_per_run: float, runs_per_s: float, cores: float, utilisation: float) -> int:
    needed = cpu_ms_per_run / 1000 * runs_per_s / (cores * utilisation)
    return max(1, math.ceil(round(needed, 6)))  # 3.0000000000000004 processes are 3


def derive_plan(per_run: PerRun, workload: Workload | None = None, assumptions: Assumptions | None = None) -> Plan:
    """The plan for ``workload`` (default: :class:`Workload`'s) from one run's costs, under ``assumptions``."""
    load = workload or Workload()
    given = assumptions or Assumptions()
    mean = load.runs_per_day / SECONDS_PER_DAY
    peak = mean * load.peak_factor
    transitions_peak = per_run.state_transitions * peak
    shards = _power_of_two_at_least(max(given.min_history_shards, transitions_peak / given.transitions_per_shard_per_s))
    history_day = per_run.history_bytes * load.runs_per_day / GB
    store_day = per_run.store_bytes * load.runs_per_day / GB
    waiting_gb = per_run.waiting_bytes * load.waiting_approvals / GB
    for_cpu = _processes(per_run.api_cpu_ms, peak, given.cores_per_api_server, given.target_utilisation)
    for_streams = max(1, math.ceil(load.watchers / given.streams_per_api_server))
    return Plan(
        mean_runs_per_s=mean,
        peak_runs_per_s=peak,
        actions_per_s_mean=per_run.actions * mean,
        actions_per_s_peak=per_run.actions * peak,
        actions_per_day=per_run.actions * load.runs_per_day,
        transitions_per_s_peak=transitions_peak,
        history_shards=shards,
        history_gb_per_day=history_day,
        history_gb_held=history_day * given.temporal_retention_days + waiting_gb,
        store_writes_per_s_mean=per_run.store_row_writes * mean,
        store_writes_per_s_peak=per_run.store_row_writes * peak,
        store_gb_per_day=store_day,
        store_gb_held=store_day * given.store_retention_days + waiting_gb,
        waiting_gb=waiting_gb,
        workers=_processes(per_run.worker_cpu_ms, peak, given.cores_per_worker, given.target_utilisation),
        api_servers=max(for_cpu, for_streams),
        api_servers_for_cpu=for_cpu,
        api_servers_for_streams=for_streams,
        stream_memory_mb=per_run.idle_stream_kb * load.watchers / 1000,
        bottlenecks=_bottlenecks(per_run, load, given, shards),
    )


def _bottlenecks(per_run: PerRun, load: Workload, given: Assumptions, shards: int) -> list[Bottleneck]:
    """The parts that do not grow by adding a machine: the store's one PostgreSQL primary (every run's journal
    goes through it) and the history shards (fixed when the cluster is created). Workers and API servers are
    added as needed and are not among them."""
    peak_per_day_run = load.peak_factor / SECONDS_PER_DAY  # peak runs/s for each run a day
    store_capacity = given.store_row_writes_per_s
    shard_capacity = given.transitions_per_shard_per_s * shards
    found = [
        Bottleneck(
            "the store's PostgreSQL primary (row writes/s)",
            per_run.store_row_writes * load.runs_per_day * peak_per_day_run / store_capacity,
            store_capacity / (per_run.store_row_writes * peak_per_day_run),
        ),
        Bottleneck(
            f"Temporal's {shards} history shards (state transitions/s)",
            per_run.state_transitions * load.runs_per_day * peak_per_day_run / shard_capacity,
            shard_capacity / (per_run.state_transitions * peak_per_day_run),
        ),
    ]
    return sorted(found, key=lambda part: part.load, reverse=True)


def plan_lines(plan: Plan, workload: Workload | None = None, assumptions: Assumptions | None = None) -> list[str]:
    """The plan as the bench prints it (and the page quotes it)."""
    load = workload or Workload()
    given = assumptions or Assumptions()
    first = plan.first_bottleneck
    return [
        f"workload: {load.runs_per_day:,} runs/day ({plan.mean_runs_per_s:.1f}/s mean, {plan.peak_runs_per_s:.1f}/s "
        f"at {load.peak_factor:g}x peak), {load.waiting_approvals:,} approvals waiting, {load.watchers:,} watchers",
        f"Temporal: {plan.actions_per_s_mean:,.0f} actions/s mean, {plan.actions_per_s_peak:,.0f} at peak "
        f"({plan.actions_per_day / 1e6:,.1f} M/day); {plan.transitions_per_s_peak:,.0f} state transitions/s at peak "
        f"-> {plan.history_shards} history shards; histories {plan.history_gb_per_day:.2f} GB/day, "
        f"{plan.history_gb_held:,.1f} GB held ({given.temporal_retention_days:g} days' retention + waiting runs)",
        f"PostgreSQL (store): {plan.store_writes_per_s_mean:,.0f} row writes/s mean, "
        f"{plan.store_writes_per_s_peak:,.0f} at peak; {plan.store_gb_per_day:.2f} GB/day (for ever with the default "
        f"retention), {plan.store_gb_held:,.1f} GB held at {given.store_retention_days:g} days' retention "
        f"(waiting runs {plan.waiting_gb:.2f} GB)",
        f"workers: {plan.workers} (one core each at {given.target_utilisation:.0%} at peak)",
        f"API servers: {plan.api_servers} ({plan.api_servers_for_cpu} for requests' CPU, "
        f"{plan.api_servers_for_streams} for {load.watchers:,} streams at {given.streams_per_api_server:,} each; "
        f"streams hold {plan.stream_memory_mb:,.0f} MB in all)",
        f"first bottleneck: {first.name} at {first.load:.0%} of its planned ceiling; it reaches the ceiling at "
        f"{first.runs_per_day_at_ceiling / 1e6:,.1f} M runs/day",
        *(
            f"  then: {part.name} at {part.load:.0%}, ceiling at {part.runs_per_day_at_ceiling / 1e6:,.1f} M runs/day"
            for part in plan.bottlenecks[1:]
        ),
    ]
