"""The chaos checker: what the store and the execution log say about the crash-safety guarantees.

Inputs, all read after the fact:

- the execution log (``tests/support/chaos/app.py`` writes one line per tool ``execute`` / model stream start and end,
  in the order they happened, naming the worker process);
- the kill records the harness wrote (``Kill``): which worker died, where the execution log ended when it was
  dead, and which tool calls had a saved outcome in the store at that moment;
- the store (journal and transcript of every run) and how each run's workflow ended.

:func:`check` returns a :class:`Report`: every violation found (numbered by the guarantee it breaks, see
``tests/support/chaos/README.md``), the counts the bench prints, and one recovery time per execution a kill interrupted.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tempo_agents.store.base import JournalEntry, Store, TranscriptEntry
from tests.support.chaos.app import ERROR_STEP, FINAL_ANSWER, STEPS, expected_calls, expected_text, step_text

RECOVERY_BOUND_SECONDS = 10.0
"""Guarantee 3's time bound: an in-flight call or step resumes on another worker within this long after a kill.
How long it takes depends on how busy the machine is, so ``bench/chaos.py`` checks it; the tests check with no
bound (``recovery_bound=None``): every interrupted execution starts again on another worker, however late."""

SAVED_TYPES = ("tool-result", "tool-error", "tool-call-suspended")
"""Journal chunks that say a tool call's outcome is saved (written with the transcript entry, or alone)."""

Key = tuple[str, str, str, str]
"""(run id, kind, call, phase): one logical execution. kind is ``tool`` or ``model``; call is the tool call id or
``step-N``; phase is ``first``, or ``resume`` for the execution that answers a suspended call."""


@dataclass(frozen=True)
class Execution:
    """One start line of the execution log and, when it came, its end line."""

    key: Key
    worker: str
    start_index: int
    start_time: float
    tool: str | None
    attempt: int | None
    activity_attempt: int | None
    end_index: int | None = None
    end_time: float | None = None
    outcome: str | None = None

    @property
    def run_id(self) -> str:
        return self.key[0]

    def describe(self) -> str:
        _, kind, call, phase = self.key
        what = f"{self.tool or kind} {call}" + (f" ({phase})" if phase != "first" else "")
        attempts = f"ctx.attempt={self.attempt}, activity attempt {self.activity_attempt}"
        return f"{what} on {self.worker} [{attempts}]"


@dataclass(frozen=True)
class Kill:
    """A worker (or the Temporal server) SIGKILLed by the harness.

    ``log_position`` is the execution log's size once the process was dead: every line before it was written
    before the kill. ``saved`` holds ``(run id, tool call id, chunk type)`` of every saved outcome in the store
    once the process was dead: whatever a killed worker saved is in it.
    """

    target: str
    """``worker`` or ``server``."""
    name: str
    """The worker's name (``CHAOS_WORKER``), or ``server``."""
    time: float
    log_position: int
    saved: frozenset[tuple[str, str, str]] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "name": self.name,
            "time": self.time,
            "logPosition": self.log_position,
            "saved": sorted(list(item) for item in self.saved),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Kill:
        return Kill(
            target=data["target"],
            name=data["name"],
            time=data["time"],
            log_position=data["logPosition"],
            saved=frozenset((a, b, c) for a, b, c in data["saved"]),
        )


@dataclass(frozen=True)
class Violation:
    guarantee: int
    run_id: str
    message: str

    def __str__(self) -> str:
        return f"[{self.guarantee}] run {self.run_id[:8]}: {self.message}"


@dataclass(frozen=True)
class Recovery:
    """How long after a kill an execution the killed worker held started again elsewhere (``None``: never)."""

    kill: Kill
    interrupted: Execution
    seconds: float | None


@dataclass(frozen=True)
class RunOutcome:
    """How a run's workflow ended, as the harness saw it: ``completed`` (with the workflow's finish reason),
    ``failed`` (with the failure), or ``unfinished`` (still open when the harness gave up)."""

    agent_id: str
    status: str
    detail: str = ""


@dataclass
class Report:
    violations: list[Violation] = field(default_factory=list)
    runs: int = 0
    failed_runs: int = 0
    unfinished_runs: int = 0
    kills: int = 0
    tool_executions: int = 0
    model_executions: int = 0
    re_executions: int = 0
    """Tool executions after the first of the same call and phase (allowed or not)."""
    re_executions_of_saved: int = 0
    """Tool executions that started although the call's outcome was already saved (guarantee 1)."""
    step_resets: int = 0
    journal_violations: int = 0
    recoveries: list[Recovery] = field(default_factory=list)
    compounded: int = 0
    """Interrupted executions that took longer than the bound after their kill but started again within the
    bound of a later worker kill: the retry was handed to a worker that died too (a second loss)."""
    run_stalls: list[float] = field(default_factory=list)
    """Per worker kill and per run under way then (killed worker's or not): seconds until that run's next
    execution started. Not a guarantee: shows what a kill costs runs whose workflow the dead worker had cached."""

    def add(self, guarantee: int, run_id: str, message: str) -> None:
        self.violations.append(Violation(guarantee, run_id, message))

    def by_guarantee(self) -> dict[int, int]:
        return dict(sorted(collections.Counter(v.guarantee for v in self.violations).items()))

    def recovery_seconds(self) -> list[float]:
        return sorted(r.seconds for r in self.recoveries if r.seconds is not None)

    def summary(self, limit: int = 40) -> str:
        lines = [
            f"{len(self.violations)} violation(s) by guarantee {self.by_guarantee()}; runs {self.runs} "
            f"(failed {self.failed_runs}, unfinished {self.unfinished_runs}); kills {self.kills}; tool executions "
            f"{self.tool_executions} (re-executions {self.re_executions}, of saved outcomes "
            f"{self.re_executions_of_saved}); step resets {self.step_resets}",
            "recoveries (s): "
            + ", ".join("never" if r.seconds is None else f"{r.seconds:.1f}" for r in self.recoveries)
            + (f"; {self.compounded} within the bound of a later kill only" if self.compounded else ""),
        ]
        if self.run_stalls:
            stalls = sorted(self.run_stalls)
            lines.append(
                f"runs under way at a kill: next execution after {stalls[len(stalls) // 2]:.1f} s (median), "
                f"{stalls[-1]:.1f} s (max), over {len(stalls)}"
            )
        lines += [str(v) for v in self.violations[:limit]]
        if len(self.violations) > limit:
            lines.append(f"... and {len(self.violations) - limit} more")
        return "\n".join(lines)


# The execution log --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogLine:
    index: int
    position: int
    """Byte offset of the line's start."""
    record: dict[str, Any]


def read_log(path: Path) -> list[LogLine]:
    """Every complete line of the execution log, with its byte offset."""
    if not path.exists():
        return []
    data = path.read_bytes()
    lines: list[LogLine] = []
    position = 0
    for raw in data.splitlines(keepends=True):
        if raw.endswith(b"\n"):
            lines.append(LogLine(len(lines), position, json.loads(raw)))
        position += len(raw)
    return lines


def executions(lines: Sequence[LogLine]) -> list[Execution]:
    """Pair start and end lines (an end belongs to the open start of the same key on the same worker)."""
    done: list[Execution] = []
    open_: dict[tuple[Key, str], Execution] = {}
    for line in lines:
        r = line.record
        key: Key = (r["run"], r["kind"], r["call"], r["phase"])
        if r["ev"] == "start":
            open_[(key, r["worker"])] = Execution(
                key=key,
                worker=r["worker"],
                start_index=line.index,
                start_time=r["t"],
                tool=r.get("tool"),
                attempt=r.get("attempt"),
                activity_attempt=r.get("activityAttempt"),
            )
        else:
            started = open_.pop((key, r["worker"]), None)
            if started is not None:
                done.append(replace(started, end_index=line.index, end_time=r["t"], outcome=r.get("outcome")))
    return sorted([*done, *open_.values()], key=lambda e: e.start_index)


def kill_index(kill: Kill, lines: Sequence[LogLine]) -> int:
    """The number of log lines written before the kill."""
    return sum(1 for line in lines if line.position < kill.log_position)


# Guarantee 1 and 3: executions against kills -----------------------------------------------------


def _saved_types(phase: str) -> tuple[str, ...]:
    return SAVED_TYPES if phase == "first" else ("tool-result", "tool-error")


def check_executions(
    report: Report,
    execs: Sequence[Execution],
    kills: Sequence[tuple[Kill, int]],
    final_saved: set[tuple[str, str]],
    recovery_bound: float | None = RECOVERY_BOUND_SECONDS,
) -> None:
    """Guarantee 1 (no re-execution of a saved outcome; re-runs only after a kill of the worker running it) and
    guarantee 3 (every execution a kill interrupted starts again on another worker, within ``recovery_bound``
    seconds when one is given)."""
    by_key: dict[Key, list[Execution]] = collections.defaultdict(list)
    for execution in execs:
        by_key[execution.key].append(execution)
        if execution.key[1] == "tool":
            report.tool_executions += 1
        else:
            report.model_executions += 1
    _check_re_executions(report, by_key, kills)
    _check_recoveries(report, execs, by_key, kills, final_saved, recovery_bound)


KilledBetween = Callable[[str, int, int], list[tuple[Kill, int]]]
"""The kills of a worker between two log indexes (``after < index <= before``)."""


def _killed_between(kills: Sequence[tuple[Kill, int]]) -> KilledBetween:
    worker_kills: dict[str, list[tuple[Kill, int]]] = collections.defaultdict(list)
    for kill, index in kills:
        if kill.target == "worker":
            worker_kills[kill.name].append((kill, index))

    def killed_between(worker: str, after: int, before: int) -> list[tuple[Kill, int]]:
        return [(k, i) for k, i in worker_kills.get(worker, []) if after < i <= before]

    return killed_between


def _check_re_executions(
    report: Report, by_key: Mapping[Key, Sequence[Execution]], kills: Sequence[tuple[Kill, int]]
) -> None:
    """Guarantee 1: every tool execution after the first of its call and phase, allowed or not."""
    killed_between = _killed_between(kills)
    for key, runs in by_key.items():
        run_id, kind, _, phase = key
        if kind != "tool":
            continue
        saved_types = _saved_types(phase)
        for later in runs[1:]:
            report.re_executions += 1
            problem = _re_execution_problem(later, runs, kills, killed_between, saved_types)
            if problem is not None:
                report.re_executions_of_saved += 1
                report.add(1, run_id, f"{later.describe()} re-executed: {problem}")


def _check_recoveries(
    report: Report,
    execs: Sequence[Execution],
    by_key: Mapping[Key, Sequence[Execution]],
    kills: Sequence[tuple[Kill, int]],
    final_saved: set[tuple[str, str]],
    recovery_bound: float | None,
) -> None:
    """Guarantee 3: per worker kill, every execution it interrupted, and when the same work started again."""
    for kill, index in kills:
        if kill.target != "worker":
            continue
        for execution in execs:
            interrupted = (
                execution.worker == kill.name
                and execution.start_index < index
                and (execution.end_index is None or execution.end_index >= index)
            )
            if not interrupted:
                continue
            # The same work started on another worker after the kill, or before it: a worker the machine starved
            # (a workflow task timed out) is taken over while it still runs, and killed later. A tool started twice
            # that way is guarantee 1's concurrent duplicate; the work itself went on.
            again = next(
                (e for e in by_key[execution.key] if e.start_index > execution.start_index and e.worker != kill.name),
                None,
            )
            if again is None:
                report.recoveries.append(Recovery(kill, execution, None))
                if execution.key[1] == "tool" and (execution.run_id, execution.key[2]) in final_saved:
                    continue  # answered without executing again: fine (only possible if saved before the kill)
                report.add(3, execution.run_id, f"{execution.describe()} was interrupted by a kill and never resumed")
                continue
            seconds = max(0.0, again.start_time - kill.time)
            report.recoveries.append(Recovery(kill, execution, seconds))
            if recovery_bound is None or seconds <= recovery_bound:
                continue
            if _within_bound_of_a_later_kill(kill, again.start_time, kills, recovery_bound):
                report.compounded += 1
            else:
                report.add(
                    3,
                    execution.run_id,
                    f"{execution.describe()} resumed {seconds:.1f} s after its worker was killed "
                    f"(bound {recovery_bound:.0f} s)",
                )


def _within_bound_of_a_later_kill(
    kill: Kill, started: float, kills: Sequence[tuple[Kill, int]], recovery_bound: float
) -> bool:
    """Whether another worker was killed after ``kill`` and the work started again within the bound of that kill:
    the retried attempt may have gone to that worker and been lost with it. The recovery figures keep the full
    time from the first kill."""
    return any(
        other.target == "worker" and kill.time < other.time <= started and started - other.time <= recovery_bound
        for other, _ in kills
    )


def _re_execution_problem(
    later: Execution,
    runs: Sequence[Execution],
    kills: Sequence[tuple[Kill, int]],
    killed_between: KilledBetween,
    saved_types: tuple[str, ...],
) -> str | None:
    """Why starting ``later`` broke guarantee 1, or ``None`` when it is the allowed at-least-once re-run."""
    run_id, _, call, _ = later.key
    for kill, index in kills:
        if index <= later.start_index and any((run_id, call, t) in kill.saved for t in saved_types):
            return f"its outcome was already saved when {kill.name} was killed, before this execution started"
    for earlier in runs:
        if earlier.start_index >= later.start_index:
            break
        if earlier.end_index is not None and earlier.end_index < later.start_index:
            # The earlier execution finished first: allowed only when its worker died before saving it.
            deaths = killed_between(earlier.worker, earlier.end_index, later.start_index)
            if not deaths:
                return (
                    f"{earlier.describe()} had finished ({earlier.outcome}) and its worker was alive, "
                    "so the outcome was saved (or being saved)"
                )
            kill = deaths[0][0]
            if any((run_id, call, t) in kill.saved for t in saved_types):
                return f"{earlier.describe()} had finished and saved its outcome before {kill.name} was killed"
        else:
            # The earlier execution was still running: allowed only when its worker was killed meanwhile.
            if not killed_between(earlier.worker, earlier.start_index, later.start_index):
                return f"{earlier.describe()} was still running on a live worker (a concurrent duplicate)"
    return None


# Guarantees 4 and 5: the journal -----------------------------------------------------------------


def visible_after_resets(entries: Sequence[JournalEntry]) -> tuple[list[JournalEntry], int]:
    """What a client keeps: at a ``step-reset`` of step N it drops every chunk after N's ``step-start`` (and the
    reset itself). Returns the kept chunks and how many resets there were."""
    visible: list[JournalEntry] = []
    step_start_at: dict[int, int] = {}
    resets = 0
    for entry in entries:
        chunk = entry.chunk
        if chunk["type"] == "step-reset":
            resets += 1
            at = step_start_at.get(chunk["payload"]["stepNumber"])
            if at is not None:
                del visible[at + 1 :]
            continue
        visible.append(entry)
        if chunk["type"] == "step-start":
            step_start_at[chunk["payload"]["stepNumber"]] = len(visible) - 1
    return visible, resets


def _payload(entry: JournalEntry) -> dict[str, Any]:
    payload = entry.chunk.get("payload")
    return payload if isinstance(payload, dict) else {}


def check_journal(
    report: Report,
    run_id: str,
    agent_id: str,
    entries: Sequence[JournalEntry],
    transcript: Sequence[TranscriptEntry],
    executed_calls: set[str],
    completed: bool = True,
) -> None:
    """Guarantees 4 and 5 for one run's journal and transcript. ``completed=False`` (a run that failed or did not
    finish) checks only what holds at any moment: offsets, duplicates, chunks without their start or call."""
    before = len(report.violations)

    def bad(guarantee: int, message: str) -> None:
        report.add(guarantee, run_id, message)

    _check_offsets_and_duplicates(bad, entries)
    visible, resets = visible_after_resets(entries)
    report.step_resets += resets
    seen = _scan_visible(bad, visible, executed_calls)
    if completed:
        _check_steps(bad, agent_id, seen)
        _check_segments(bad, agent_id, entries, seen)
        _check_transcript(bad, transcript)
    report.journal_violations += sum(1 for v in report.violations[before:] if v.guarantee in (4, 5))


Bad = Callable[[int, str], None]
"""Records a violation of a guarantee (its number, what is wrong) for the run being checked."""


def _check_offsets_and_duplicates(bad: Bad, entries: Sequence[JournalEntry]) -> None:
    """Guarantee 5 at any moment: offsets 0..n-1, and every durable chunk once."""
    offsets = [entry.offset for entry in entries]
    if offsets != list(range(len(entries))):
        missing = sorted(set(range(max(offsets, default=-1) + 1)) - set(offsets))
        bad(5, f"journal offsets are not 0..{len(entries) - 1}: missing {missing[:10]}")

    # Durable chunks appear once: tool chunks per tool call, step-start per step, step-finish and finish once
    # per step and reason (a suspended step finishes twice: suspended, then after the resume).
    identities: collections.Counter[tuple[str, str, int]] = collections.Counter()
    step = -1
    for entry in entries:
        kind, payload = entry.chunk["type"], _payload(entry)
        if kind == "step-start":
            step = payload["stepNumber"]
            identities[(kind, "", step)] += 1
        elif kind in ("tool-call", "tool-result", "tool-error", "tool-call-suspended"):
            # Tool call ids name their step here (call_<step>_<n>): one per run, wherever a duplicate lands.
            identities[(kind, payload.get("toolCallId", ""), -1)] += 1
        elif kind in ("step-finish", "finish"):
            identities[(kind, payload.get("stepResult", {}).get("reason", ""), step)] += 1
    for (kind, what, at_step), count in identities.items():
        if count > 1:
            where = f" at step {at_step}" if at_step >= 0 else ""
            bad(5, f"duplicate durable chunk {kind} {what}{where}: {count} times")


@dataclass
class _SeenChunks:
    """What a client keeps of a run's journal after step resets, per step: texts by step, tool call inputs
    started and ended, tool calls, each call's tool name and its answers' chunk types in order."""

    texts: collections.defaultdict[int, list[str]] = field(default_factory=lambda: collections.defaultdict(list))
    streaming: collections.defaultdict[int, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    streaming_ends: collections.defaultdict[int, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    calls: collections.defaultdict[int, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    call_names: dict[str, str] = field(default_factory=dict)
    answers: collections.defaultdict[str, list[str]] = field(default_factory=lambda: collections.defaultdict(list))


def _scan_visible(bad: Bad, visible: Sequence[JournalEntry], executed_calls: set[str]) -> _SeenChunks:
    """Gather the kept chunks by step; guarantees 4 and 5 at any moment: every tool call input closed after its
    start, every tool call made, every answer after its call."""
    seen = _SeenChunks()
    step = -1
    for entry in visible:
        kind, payload = entry.chunk["type"], _payload(entry)
        call_id = payload.get("toolCallId", "")
        if kind == "step-start":
            step = payload["stepNumber"]
        elif kind == "text-delta":
            seen.texts[int(str(payload["id"]).removeprefix("text-"))].append(payload["text"])
        elif kind == "tool-call-input-streaming-start":
            seen.streaming[step][call_id] += 1
        elif kind == "tool-call-delta":
            if seen.streaming[step][call_id] == 0:
                bad(4, f"tool-call-delta for {call_id} at offset {entry.offset} without its input start")
        elif kind == "tool-call-input-streaming-end":
            seen.streaming_ends[step][call_id] += 1
            if seen.streaming[step][call_id] == 0:
                bad(4, f"tool-call-input-streaming-end for {call_id} at offset {entry.offset} without its start")
        elif kind == "tool-call":
            seen.calls[step][call_id] += 1
            seen.call_names[call_id] = payload.get("toolName", "")
            if call_id not in executed_calls:
                bad(4, f"the journal shows tool-call {call_id} (offset {entry.offset}) that was never executed")
        elif kind in ("tool-result", "tool-error", "tool-call-suspended"):
            if call_id not in seen.call_names:
                bad(5, f"orphaned {kind} for {call_id} at offset {entry.offset}: no tool-call before it")
            seen.answers[call_id].append(kind)
    return seen


def _check_steps(bad: Bad, agent_id: str, seen: _SeenChunks) -> None:
    """Guarantees 4 and 5 for a completed run: per step, exactly the scripted calls and text; each call answered
    as scripted."""
    for at_step in range(STEPS + 1):
        want = sorted(call_id for call_id, _ in expected_calls(agent_id, at_step))
        for what, counter in (
            ("tool-call-input-streaming-start", seen.streaming[at_step]),
            ("tool-call-input-streaming-end", seen.streaming_ends[at_step]),
            ("tool-call", seen.calls[at_step]),
        ):
            got = sorted(counter.elements())
            if got != want:
                bad(4, f"step {at_step} shows {what} for {got} after reset handling, expected {want}")
        text = "".join(seen.texts.get(at_step, []))
        if text != step_text(at_step):
            bad(4, f"step {at_step} text after reset handling is {text!r}, expected {step_text(at_step)!r}")
    for call_id, name in seen.call_names.items():
        got = seen.answers.get(call_id, [])
        want_answer = (
            ["tool-error"] if name == "beta" and call_id.startswith(f"call_{ERROR_STEP}_") else ["tool-result"]
        )
        if name == "approve":
            want_answer = ["tool-call-suspended", "tool-result"]
        if got != want_answer:
            bad(5, f"{name} call {call_id} is answered by {got or 'nothing'} in the journal, expected {want_answer}")


def _check_segments(bad: Bad, agent_id: str, entries: Sequence[JournalEntry], seen: _SeenChunks) -> None:
    """Guarantee 5 for a completed run: one start and one finish per segment, the journal ending with a finish,
    the scripted text."""
    finishes = [_payload(e).get("stepResult", {}).get("reason") for e in entries if e.chunk["type"] == "finish"]
    want_finishes = ["suspended", "stop"] if agent_id == "chaos-suspend" else ["stop"]
    if finishes != want_finishes:
        bad(5, f"finish chunks say {finishes}, expected {want_finishes}")
    starts = sum(1 for e in entries if e.chunk["type"] == "start")
    if starts != len(want_finishes):
        bad(5, f"{starts} start chunk(s) for {len(want_finishes)} segment(s)")
    if entries and entries[-1].chunk["type"] != "finish":
        bad(5, f"the journal ends with {entries[-1].chunk['type']}, not finish")
    full_text = "".join("".join(seen.texts.get(s, [])) for s in sorted(seen.texts))
    if full_text != expected_text():
        bad(5, "the run's text after reset handling is not the scripted text")


def _check_transcript(bad: Bad, transcript: Sequence[TranscriptEntry]) -> None:
    """Guarantee 5 for a completed run: one assistant message per step, the last the scripted final answer."""
    assistants = [e for e in transcript if e.part == "assistant"]
    if [e.step for e in assistants] != list(range(STEPS + 1)):
        bad(5, f"the transcript has assistant messages for steps {[e.step for e in assistants]}")
    elif _text_of(assistants[-1].message) != FINAL_ANSWER:
        bad(5, f"the final answer in the transcript is {_text_of(assistants[-1].message)!r}, not the scripted one")


def run_stalls(execs: Sequence[Execution], kills: Sequence[tuple[Kill, int]]) -> list[float]:
    """See :attr:`Report.run_stalls`."""
    last_step = f"step-{STEPS}"
    stalls: list[float] = []
    for kill, index in kills:
        if kill.target != "worker":
            continue
        under_way = {e.run_id for e in execs if e.start_index < index}
        under_way -= {
            e.run_id
            for e in execs
            if e.key[1] == "model" and e.key[2] == last_step and e.end_index is not None and e.end_index < index
        }
        for run_id in sorted(under_way):
            following = next((e for e in execs if e.run_id == run_id and e.start_index >= index), None)
            if following is not None:
                stalls.append(max(0.0, following.start_time - kill.time))
    return stalls


def _text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") for part in content or [] if isinstance(part, dict) and part.get("type") == "text"
    )


# Everything together ------------------------------------------------------------------------------


async def saved_outcomes(store: Store, run_ids: Iterable[str]) -> frozenset[tuple[str, str, str]]:
    """``(run id, tool call id, chunk type)`` of every saved tool outcome in these runs' journals."""
    saved: set[tuple[str, str, str]] = set()
    for run_id in run_ids:
        for entry in await store.read_chunks(run_id, 0, 1_000_000):
            if entry.chunk["type"] in SAVED_TYPES:
                saved.add((run_id, _payload(entry).get("toolCallId", ""), entry.chunk["type"]))
    return frozenset(saved)


async def check(
    store: Store,
    exec_log: Path,
    kills: Sequence[Kill],
    outcomes: Mapping[str, RunOutcome],
    recovery_bound: float | None = RECOVERY_BOUND_SECONDS,
) -> Report:
    """Check every run in ``outcomes`` against the guarantees; see the module docstring. ``recovery_bound``:
    guarantee 3's time bound (None: interrupted work must start again, with no bound on when)."""
    report = Report(runs=len(outcomes), kills=sum(1 for k in kills if k.target == "worker"))
    lines = read_log(exec_log)
    execs = [e for e in executions(lines) if e.run_id in outcomes]
    indexed = [(kill, kill_index(kill, lines)) for kill in kills]
    final = await saved_outcomes(store, outcomes)
    check_executions(report, execs, indexed, {(run, call) for run, call, _ in final}, recovery_bound)
    report.run_stalls = run_stalls(execs, indexed)

    executed: dict[str, set[str]] = collections.defaultdict(set)
    for execution in execs:
        if execution.key[1] == "tool":
            executed[execution.run_id].add(execution.key[2])
    for run_id, outcome in outcomes.items():
        if outcome.status == "failed":
            report.failed_runs += 1
            report.add(2, run_id, f"the run failed: {outcome.detail}")
        elif outcome.status == "unfinished":
            report.unfinished_runs += 1
            report.add(5, run_id, f"the run did not finish: {outcome.detail}")
        elif outcome.detail != "stop":
            report.add(5, run_id, f"the run finished with reason {outcome.detail!r}, not stop")
        entries = await store.read_chunks(run_id, 0, 1_000_000)
        transcript = await store.get_transcript(run_id)
        completed = outcome.status == "completed"
        check_journal(report, run_id, outcome.agent_id, entries, transcript, executed[run_id], completed)
    return report


# A reader in another process ----------------------------------------------------------------------


STREAM_GUARANTEE = 7
"""A reader attached through another process (the API server's ``GET /api/runs/{id}/stream``) sees every chunk of
the journal exactly once, in order."""


def check_stream(
    report: Report, run_id: str, journal: Sequence[JournalEntry], events: Sequence[tuple[int, str]]
) -> None:
    """Guarantee 7 for one run: ``events`` are the ``(id, chunk type)`` of every SSE event the reader received,
    in order; the journal is the store's after the run ended."""
    ids = [offset for offset, _ in events]
    duplicated = sorted(offset for offset, count in collections.Counter(ids).items() if count > 1)
    if duplicated:
        report.add(STREAM_GUARANTEE, run_id, f"the stream sent offsets {duplicated[:8]} more than once")
    if ids != sorted(ids):
        report.add(STREAM_GUARANTEE, run_id, "the stream sent offsets out of order")
    types = {entry.offset: entry.chunk["type"] for entry in journal}
    missing = sorted(set(types) - set(ids))
    if missing:
        report.add(STREAM_GUARANTEE, run_id, f"the stream never sent offsets {missing[:8]} ({len(missing)} missing)")
    unknown = sorted(set(ids) - set(types))
    if unknown:
        report.add(STREAM_GUARANTEE, run_id, f"the stream sent offsets {unknown[:8]} that are not in the journal")
    for offset, chunk_type in events:
        if offset in types and types[offset] != chunk_type:
            message = f"offset {offset}: the stream sent {chunk_type}, the journal has {types[offset]}"
            report.add(STREAM_GUARANTEE, run_id, message)
            break
