"""The chaos checker itself: it must flag what breaks a guarantee and nothing else (synthetic logs and journals)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tempo_agents.store.base import JournalEntry, TranscriptEntry
from tests.support.chaos.app import ERROR_STEP, STEPS, expected_calls, step_text
from tests.support.chaos.check import (
    RECOVERY_BOUND_SECONDS,
    Key,
    Kill,
    Report,
    check_executions,
    check_journal,
    check_stream,
    executions,
    kill_index,
    read_log,
)

RUN = "run-1"


def chunk(kind: str, **payload: Any) -> dict[str, Any]:
    return {"type": kind, "runId": RUN, "from": "AGENT", "payload": payload}


def step_chunks(step: int, agent_id: str = "chaos") -> list[dict[str, Any]]:
    calls = expected_calls(agent_id, step)
    out = [chunk("step-start", stepNumber=step, warnings=[])]
    out.append(chunk("text-delta", id=f"text-{step}", text=step_text(step)))
    for call_id, name in calls:
        out.append(chunk("tool-call-input-streaming-start", toolCallId=call_id, toolName=name))
        out.append(chunk("tool-call-delta", toolCallId=call_id, toolName=name, argsTextDelta="{}"))
    out += [chunk("tool-call-input-streaming-end", toolCallId=call_id) for call_id, _ in calls]
    out += [chunk("tool-call", toolCallId=call_id, toolName=name, args={}) for call_id, name in calls]
    for call_id, name in calls:
        kind = "tool-error" if name == "beta" and step == ERROR_STEP else "tool-result"
        out.append(chunk(kind, toolCallId=call_id, toolName=name))
    reason = "tool-calls" if calls else "stop"
    out.append(chunk("step-finish", stepResult={"reason": reason, "isContinued": bool(calls)}))
    return out


def clean_chunks() -> list[dict[str, Any]]:
    chunks = [chunk("start", agentId="chaos")]
    for step in range(STEPS + 1):
        chunks += step_chunks(step)
    return [*chunks, chunk("finish", stepResult={"reason": "stop"})]


def entries(chunks: list[dict[str, Any]]) -> list[JournalEntry]:
    return [JournalEntry(offset, c) for offset, c in enumerate(chunks)]


def transcript() -> list[TranscriptEntry]:
    def message(step: int) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "text", "text": step_text(step)}]}

    return [TranscriptEntry(step, "assistant", 0, message(step)) for step in range(STEPS + 1)]


ALL_CALLS = {call_id for step in range(STEPS) for call_id, _ in expected_calls("chaos", step)}


def journal_report(journal: list[JournalEntry], executed: set[str] = ALL_CALLS) -> Report:
    report = Report()
    check_journal(report, RUN, "chaos", journal, transcript(), executed)
    return report


def test_a_clean_journal_has_no_violations() -> None:
    assert journal_report(entries(clean_chunks())).violations == []


def test_a_reset_drops_the_failed_attempt() -> None:
    chunks = clean_chunks()
    at = next(i for i, c in enumerate(chunks) if c["type"] == "step-start" and c["payload"]["stepNumber"] == 2)
    failed = [  # what the killed attempt streamed before it died
        chunk("text-delta", id="text-2", text="Step 2 sta"),
        chunk("tool-call-input-streaming-start", toolCallId="call_2_0", toolName="alpha"),
        chunk("step-reset", stepNumber=2, attempt=2),
    ]
    report = journal_report(entries(chunks[: at + 1] + failed + chunks[at + 1 :]))
    assert report.violations == []
    assert report.step_resets == 1


def test_a_tool_call_kept_before_the_reset_is_lost_to_clients() -> None:
    # The retried step rewrote its tool-call chunk in place (before the reset): clients drop it.
    chunks = clean_chunks()
    start = next(i for i, c in enumerate(chunks) if c["type"] == "step-start" and c["payload"]["stepNumber"] == 1)
    call = next(
        i for i, c in enumerate(chunks) if c["type"] == "tool-call" and c["payload"]["toolCallId"] == "call_1_0"
    )
    moved = chunks[call]
    rest = chunks[start + 1 :]
    rest.remove(moved)
    journal = [*chunks[: start + 1], moved, chunk("step-reset", stepNumber=1, attempt=2), *rest]
    messages = [v.message for v in journal_report(entries(journal)).violations]
    assert any("step 1 shows tool-call for ['call_1_1']" in m for m in messages), messages
    assert any("orphaned tool-result for call_1_0" in m for m in messages), messages


def test_duplicates_gaps_orphans_and_unmade_calls_are_flagged() -> None:
    chunks = clean_chunks()
    result = next(c for c in chunks if c["type"] == "tool-result")
    duplicated = entries([*chunks[:-1], result, chunks[-1]])
    assert any("duplicate durable chunk tool-result" in v.message for v in journal_report(duplicated).violations)

    gap = entries(chunks)
    gap = gap[:5] + [JournalEntry(e.offset + 1, e.chunk) for e in gap[5:]]
    assert any("offsets are not" in v.message for v in journal_report(gap).violations)

    unmade = journal_report(entries(chunks), ALL_CALLS - {"call_4_1"})
    assert [v.guarantee for v in unmade.violations] == [4]

    no_end = [
        c
        for c in chunks
        if not (c["type"] == "tool-call-input-streaming-end" and c["payload"]["toolCallId"] == "call_0_1")
    ]
    assert any("tool-call-input-streaming-end" in v.message for v in journal_report(entries(no_end)).violations)

    stopped_early = entries(chunks[:-1])
    assert any("finish chunks say" in v.message for v in journal_report(stopped_early).violations)


class Log:
    """Builds an execution log; ``kill`` records a kill at the current end of the log."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kills: list[Kill] = []
        self.clock = 100.0

    def line(self, ev: str, worker: str, call: str = "call_0_0", **extra: Any) -> None:
        self.clock += 1
        record = {"t": self.clock, "pid": 1, "worker": worker, "ev": ev, "kind": "tool", "run": RUN, "call": call}
        record |= {"phase": "first", "tool": "alpha", **extra}
        with self.path.open("a") as log:
            log.write(json.dumps(record) + "\n")

    def kill(self, worker: str, saved: bool) -> None:
        self.clock += 1
        what = frozenset({(RUN, "call_0_0", "tool-result")}) if saved else frozenset()
        self.kills.append(Kill("worker", worker, self.clock, self.path.stat().st_size, what))

    def report(self, recovery_bound: float | None = RECOVERY_BOUND_SECONDS) -> Report:
        lines = read_log(self.path)
        report = Report()
        kills = [(k, kill_index(k, lines)) for k in self.kills]
        check_executions(report, executions(lines), kills, set(), recovery_bound)
        return report


def test_a_rerun_after_a_kill_before_saving_is_allowed_and_timed(tmp_path: Path) -> None:
    log = Log(tmp_path / "exec.log")
    log.line("start", "w0.0")
    log.kill("w0.0", saved=False)
    log.line("start", "w1.1")
    log.line("end", "w1.1", outcome="result")
    report = log.report()
    assert report.violations == []
    assert report.re_executions == 1 and report.re_executions_of_saved == 0
    assert [r.seconds for r in report.recoveries] == [1.0]


def test_a_rerun_after_the_tool_ended_is_allowed_only_if_the_kill_came_before_the_save(tmp_path: Path) -> None:
    for saved in (False, True):
        log = Log(tmp_path / f"exec-{saved}.log")
        log.line("start", "w0.0")
        log.line("end", "w0.0", outcome="result")
        log.kill("w0.0", saved=saved)
        log.line("start", "w1.1")
        log.line("end", "w1.1", outcome="result")
        report = log.report()
        assert report.re_executions_of_saved == (1 if saved else 0)
        assert [v.guarantee for v in report.violations] == ([1] if saved else [])


def test_reruns_on_live_workers_are_flagged(tmp_path: Path) -> None:
    after_end = Log(tmp_path / "a.log")
    after_end.line("start", "w0.0")
    after_end.line("end", "w0.0", outcome="result")
    after_end.line("start", "w1.1")
    assert "its worker was alive" in after_end.report().violations[0].message

    concurrent = Log(tmp_path / "b.log")
    concurrent.line("start", "w0.0")
    concurrent.line("start", "w1.1")
    concurrent.line("end", "w0.0", outcome="result")
    concurrent.line("end", "w1.1", outcome="result")
    assert "concurrent duplicate" in concurrent.report().violations[0].message


def test_slow_or_missing_recovery_breaks_guarantee_3(tmp_path: Path) -> None:
    log = Log(tmp_path / "exec.log")
    log.line("start", "w0.0")
    log.kill("w0.0", saved=False)
    log.clock += 30
    log.line("start", "w1.1")
    assert "resumed 31.0 s after" in log.report().violations[0].message

    never = Log(tmp_path / "never.log")
    never.line("start", "w0.0")
    never.kill("w0.0", saved=False)
    assert "never resumed" in never.report().violations[0].message


def test_work_taken_over_before_its_worker_was_killed_is_not_lost(tmp_path: Path) -> None:
    """A starved worker's model step is started again elsewhere (its workflow task timed out) and the starved worker
    is killed later: the step went on, nothing waits for a recovery."""
    log = Log(tmp_path / "exec.log")
    log.line("start", "w0.0", kind="model", call="step-3")
    log.line("start", "w1.1", kind="model", call="step-3")
    log.line("end", "w1.1", kind="model", call="step-3", outcome="result")
    log.kill("w0.0", saved=False)
    report = log.report()
    assert report.violations == []
    assert [r.seconds for r in report.recoveries] == [0.0]


def test_without_a_bound_a_late_recovery_is_timed_but_a_missing_one_still_breaks_guarantee_3(tmp_path: Path) -> None:
    """The tests' mode: how late the work starts again depends on the machine, that it starts again does not."""
    log = Log(tmp_path / "exec.log")
    log.line("start", "w0.0")
    log.kill("w0.0", saved=False)
    log.clock += 30
    log.line("start", "w1.1")
    late = log.report(recovery_bound=None)
    assert late.violations == []
    assert [r.seconds for r in late.recoveries] == [31.0]

    never = Log(tmp_path / "never.log")
    never.line("start", "w0.0")
    never.kill("w0.0", saved=False)
    assert "never resumed" in never.report(recovery_bound=None).violations[0].message


def test_a_second_loss_restarts_the_bound_but_only_within_it(tmp_path: Path) -> None:
    """Killed twice (the retry went to a worker that died too): measured from the later kill, still bounded."""
    for after_second, violations in ((5, 0), (15, 1)):
        log = Log(tmp_path / f"exec-{after_second}.log")
        log.line("start", "w0.0")
        log.kill("w0.0", saved=False)
        log.clock += 8
        log.kill("w1.1", saved=False)
        log.clock += after_second - 1
        log.line("start", "w0.2")
        report = log.report()
        assert len(report.violations) == violations
        assert report.compounded == 1 - violations
        assert [r.seconds for r in report.recoveries] == [float(9 + after_second)]  # from the first kill


def test_keys_pair_start_and_end_per_worker(tmp_path: Path) -> None:
    log = Log(tmp_path / "exec.log")
    log.line("start", "w0.0", phase="first")
    log.line("start", "w0.0", phase="resume")
    log.line("end", "w0.0", phase="resume", outcome="result")
    found = {(e.key, e.end_index is not None) for e in executions(read_log(log.path))}
    first: Key = (RUN, "tool", "call_0_0", "first")
    resume: Key = (RUN, "tool", "call_0_0", "resume")
    assert found == {(first, False), (resume, True)}


def stream_report(events: list[tuple[int, str]]) -> Report:
    report = Report()
    check_stream(report, RUN, entries(clean_chunks()), events)
    return report


def test_a_reader_that_saw_every_chunk_once_has_no_violations() -> None:
    journal = entries(clean_chunks())
    assert stream_report([(e.offset, e.chunk["type"]) for e in journal]).violations == []


def test_a_reader_that_missed_repeated_reordered_or_mistyped_chunks_is_flagged() -> None:
    events = [(e.offset, e.chunk["type"]) for e in entries(clean_chunks())]
    messages = {
        "missing": events[:3] + events[4:],
        "more than once": events[:5] + events[4:],
        "out of order": [events[1], events[0], *events[2:]],
        "not in the journal": [*events, (len(events), "finish")],
        "the journal has": [(events[0][0], "text-delta"), *events[1:]],
    }
    for expected, seen in messages.items():
        violations = stream_report(seen).violations
        assert violations and all(v.guarantee == 7 for v in violations), expected
        assert any(expected in v.message for v in violations), (expected, [v.message for v in violations])
