"""The soak's verdict: the runs the chaos checker does not know (sub-agent parents, cancelled runs), whether the
processes' memory and descriptors stay flat after warm-up, and whether latency drifts.

Pure functions over what ``bench/soak.py`` collected: journals and transcripts read from the store, how each
workflow ended, the samples taken every 10 s, the latencies measured. ``tests/durability/test_soak.py`` runs the soak
for two minutes and holds it to this verdict, and tests the functions on made-up samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tempo_agents.store.base import JournalEntry, TranscriptEntry
from tests.support.chaos.app import DELEGATE_CALL, PARENT_ANSWER
from tests.support.chaos.check import Report, check_journal

# Runs the chaos checker does not script ---------------------------------------------------------


def _offsets_contiguous(report: Report, run_id: str, entries: Sequence[JournalEntry]) -> None:
    offsets = [entry.offset for entry in entries]
    if offsets != list(range(len(entries))):
        missing = sorted(set(range(max(offsets, default=-1) + 1)) - set(offsets))
        report.add(5, run_id, f"journal offsets are not 0..{len(entries) - 1}: missing {missing[:10]}")


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def check_parent(
    report: Report,
    run_id: str,
    entries: Sequence[JournalEntry],
    transcript: Sequence[TranscriptEntry],
    child_entries: Sequence[JournalEntry],
) -> None:
    """A ``chaos-parent`` run: its journal contiguous, the delegating call made and answered once, every chunk of the
    child's journal relayed once and in order (as the call's ``tool-output``), one segment ending ``stop``, and the
    transcript's last assistant message the scripted answer."""
    before = len(report.violations)
    _offsets_contiguous(report, run_id, entries)
    kinds = [entry.chunk["type"] for entry in entries]
    calls = [e for e in entries if e.chunk["type"] == "tool-call"]
    if [e.chunk["payload"].get("toolCallId") for e in calls] != [DELEGATE_CALL]:
        report.add(5, run_id, f"the parent's tool calls are {[e.chunk['payload'] for e in calls][:3]}")
    answered = [
        e.chunk["type"]
        for e in entries
        if e.chunk["type"] in ("tool-result", "tool-error", "tool-call-suspended")
        and e.chunk["payload"].get("toolCallId") == DELEGATE_CALL
    ]
    if answered != ["tool-result"]:
        report.add(5, run_id, f"the delegating call is answered by {answered}, expected one tool-result")
    relayed = [
        e.chunk["payload"]["output"]
        for e in entries
        if e.chunk["type"] == "tool-output"
        and e.chunk["payload"].get("toolCallId") == DELEGATE_CALL
        and isinstance(e.chunk["payload"].get("output"), dict)
    ]
    child = [entry.chunk for entry in child_entries]
    if [c.get("type") for c in relayed] != [c["type"] for c in child]:
        report.add(
            5, run_id, f"{len(relayed)} chunks relayed from the child, whose journal has {len(child)} (or out of order)"
        )
    finishes = [e.chunk["payload"].get("stepResult", {}).get("reason") for e in entries if e.chunk["type"] == "finish"]
    if finishes != ["stop"] or kinds.count("start") != 1 or (kinds and kinds[-1] != "finish"):
        report.add(5, run_id, f"the parent's segments end {finishes} with {kinds.count('start')} start chunk(s)")
    assistants = [entry for entry in transcript if entry.part == "assistant"]
    if not assistants or _text(assistants[-1].message) != PARENT_ANSWER:
        report.add(5, run_id, "the parent's final answer in the transcript is not the scripted one")
    report.journal_violations += len(report.violations) - before


def check_cancelled(
    report: Report, run_id: str, agent_id: str, status: str, entries: Sequence[JournalEntry], executed: set[str]
) -> None:
    """A run cancelled by the soak: its workflow ended cancelled, its journal holds what holds at any moment (offsets,
    no duplicate, nothing without its start or call: the chaos checker's ``completed=False`` checks), an ``abort``,
    and it ends with a ``finish`` whose reason is ``aborted``. A call the model made may be cancelled before it
    executes, so its ``tool-call`` needs no execution here."""
    if status != "cancelled":
        report.add(2, run_id, f"the cancelled run's workflow ended {status}, not cancelled")
    made = {e.chunk["payload"].get("toolCallId", "") for e in entries if e.chunk["type"] == "tool-call"}
    check_journal(report, run_id, agent_id, entries, [], executed | made, completed=False)
    kinds = [entry.chunk["type"] for entry in entries]
    last = entries[-1].chunk if entries else {}
    reason = last.get("payload", {}).get("stepResult", {}).get("reason") if last.get("type") == "finish" else None
    if "abort" not in kinds or reason != "aborted":
        report.add(5, run_id, f"the cancelled run's journal ends {kinds[-3:]} (reason {reason}), not abort … finish")
        report.journal_violations += 1


# Flat after warm-up -----------------------------------------------------------------------------


def slope_per_hour(points: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of ``(seconds, value)`` points, per hour (0 for fewer than two distinct times)."""
    if len({t for t, _ in points}) < 2:
        return 0.0
    times = [t for t, _ in points]
    values = [v for _, v in points]
    mean_t, mean_v = statistics.fmean(times), statistics.fmean(values)
    numerator = sum((t - mean_t) * (v - mean_v) for t, v in points)
    denominator = sum((t - mean_t) ** 2 for t in times)
    return numerator / denominator * 3600.0


@dataclass(frozen=True)
class Bounds:
    """How flat is flat: slopes per hour after warm-up, and how far the last third's latency may be from the
    first's (``last <= factor * first + slack``)."""

    rss_mb_per_hour: float = 30.0
    fds_per_hour: float = 20.0
    threads_per_hour: float = 10.0
    tasks_per_hour: float = 200.0
    latency_factor: float = 2.0
    latency_slack_seconds: float = 0.5


@dataclass
class Slope:
    process: str
    measure: str
    per_hour: float
    bound: float
    first: float
    last: float
    samples: int

    @property
    def flat(self) -> bool:
        return self.per_hour <= self.bound

    def to_json(self) -> dict[str, Any]:
        return {
            "process": self.process,
            "measure": self.measure,
            "perHour": round(self.per_hour, 3),
            "bound": self.bound,
            "first": self.first,
            "last": self.last,
            "samples": self.samples,
            "flat": self.flat,
        }


MEASURES = ("rss_mb", "fds", "threads", "tasks")


def slopes(
    samples: Sequence[Mapping[str, Any]], processes: Sequence[str], warmup_seconds: float, bounds: Bounds
) -> list[Slope]:
    """Per process and measure, the slope of the samples taken after ``warmup_seconds`` (each sample:
    ``{"t": seconds since start, "processes": {name: {"pid", "rss_mb", "fds", "threads", "tasks"}}}``). A process
    that was replaced (a new pid) counts from its first sample after warm-up: only the last pid's samples count."""
    limit = {
        "rss_mb": bounds.rss_mb_per_hour,
        "fds": bounds.fds_per_hour,
        "threads": bounds.threads_per_hour,
        "tasks": bounds.tasks_per_hour,
    }
    found: list[Slope] = []
    for process in processes:
        rows = [(s["t"], s["processes"].get(process)) for s in samples if s["t"] >= warmup_seconds]
        rows = [(t, row) for t, row in rows if row is not None]
        if not rows:
            continue
        last_pid = rows[-1][1]["pid"]
        rows = [(t, row) for t, row in rows if row["pid"] == last_pid]
        for measure in MEASURES:
            points = [(float(t), float(row[measure])) for t, row in rows if row.get(measure) is not None]
            if len(points) < 2:
                continue
            found.append(
                Slope(
                    process,
                    measure,
                    slope_per_hour(points),
                    limit[measure],
                    points[0][1],
                    points[-1][1],
                    len(points),
                )
            )
    return found


# Latency that does not drift ---------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class Drift:
    what: str
    first_p50: float
    first_p95: float
    last_p50: float
    last_p95: float
    first_count: int
    last_count: int
    bounds: Bounds

    @property
    def steady(self) -> bool:
        if self.first_count < 3 or self.last_count < 3:
            return True  # too few to compare; reported as such
        factor, slack = self.bounds.latency_factor, self.bounds.latency_slack_seconds
        return self.last_p50 <= factor * self.first_p50 + slack and self.last_p95 <= factor * self.first_p95 + slack

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "first": {"p50": self.first_p50, "p95": self.first_p95, "count": self.first_count},
            "last": {"p50": self.last_p50, "p95": self.last_p95, "count": self.last_count},
            "steady": self.steady,
        }


def drift(what: str, timed: Sequence[tuple[float, float]], duration: float, bounds: Bounds) -> Drift:
    """``timed``: ``(seconds since start, latency)``; compares the first third of the soak with the last."""
    first = [v for t, v in timed if t < duration / 3]
    last = [v for t, v in timed if t >= 2 * duration / 3]
    return Drift(
        what,
        percentile(first, 0.5),
        percentile(first, 0.95),
        percentile(last, 0.5),
        percentile(last, 0.95),
        len(first),
        len(last),
        bounds,
    )


@dataclass
class Verdict:
    report: Report
    slopes: list[Slope] = field(default_factory=list)
    drifts: list[Drift] = field(default_factory=list)
    reported: list[Slope] = field(default_factory=list)
    """Slopes shown beside the verdict but not deciding it: the Temporal dev server's memory, which grows with the
    workflows it keeps (every closed run stays until the namespace's retention), a process that is not ours."""

    @property
    def nothing_lost(self) -> bool:
        return not self.report.violations and self.report.failed_runs == 0 and self.report.unfinished_runs == 0

    @property
    def flat(self) -> bool:
        return all(slope.flat for slope in self.slopes)

    @property
    def steady(self) -> bool:
        return all(d.steady for d in self.drifts)

    @property
    def passed(self) -> bool:
        return self.nothing_lost and self.flat and self.steady

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "nothingLost": self.nothing_lost,
            "flat": self.flat,
            "latencySteady": self.steady,
            "violations": [str(v) for v in self.report.violations[:50]],
            "violationCount": len(self.report.violations),
            "runs": self.report.runs,
            "failedRuns": self.report.failed_runs,
            "unfinishedRuns": self.report.unfinished_runs,
            "kills": self.report.kills,
            "toolExecutions": self.report.tool_executions,
            "reExecutionsOfSaved": self.report.re_executions_of_saved,
            "slopes": [s.to_json() for s in self.slopes],
            "reportedSlopes": [s.to_json() for s in self.reported],
            "drift": [d.to_json() for d in self.drifts],
        }
