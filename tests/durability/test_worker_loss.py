"""Workers that die in the middle of a tool call (SIGKILL) never fail a run by themselves.

Real worker processes (``tempo-agents worker``) on the session's dev server; the test restarts a worker
whenever one dies. One tool kills its worker on its first four attempts and then succeeds; another kills
every worker it runs on and is stopped after its configured number of losses with a tool error that
names it, and the run goes on. The same holds for local-activity tools, whose lost starts are counted in the
store (a local activity starts again at attempt 1). (Ten deaths in a row with the default options:
tests/durability/test_chaos.py.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tempo_agents.journal.chunks import ErrorChunk, ToolErrorChunk, ToolResultChunk
from tempo_agents.streams.stream import GenerateResult
from tests.support.worker_processes import MakeWorkerProcesses, replace_dead_workers

pytestmark = pytest.mark.timeout(180)


def app_source(*, options: str, sturdy_deaths: int, in_parallel: bool) -> str:
    """An App whose agent ``survivor`` calls ``sturdy`` (kills ``sturdy_deaths`` workers, then succeeds) and
    ``crasher`` (kills every worker; 3 attempts), in one step or one after the other, with ``options``."""
    calls = [f"ScriptedToolCall({name!r}, {{}}, id={name[0] + '1'!r})" for name in ("sturdy", "crasher")]
    steps = [calls] if in_parallel else [[call] for call in calls]
    script = [f"ScriptedResponse(tool_calls=[{', '.join(step)}])" for step in steps]
    return f"""
import os
import signal
from datetime import timedelta
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions

LOG = Path(__file__).with_name("executions.log")
OPTIONS = {options}


def log(line: str) -> None:
    with LOG.open("a") as file:
        file.write(line + "\\n")


async def sturdy(data: dict, ctx: ToolContext) -> str:
    log(f"sturdy {{ctx.attempt}}")
    if ctx.attempt <= {sturdy_deaths}:
        os.kill(os.getpid(), signal.SIGKILL)
    return f"done on attempt {{ctx.attempt}}"


async def crasher(data: dict, ctx: ToolContext) -> str:
    log(f"crasher {{ctx.attempt}}")
    os.kill(os.getpid(), signal.SIGKILL)
    return "never"


model = ScriptedModel([{", ".join(script)}, ScriptedResponse(text="Survived.")])
tools = {{
    "sturdy": create_tool(id="sturdy", description="Kills workers", execute=sturdy, activity=OPTIONS),
    "crasher": create_tool(
        id="crasher",
        description="Kills every worker",
        execute=crasher,
        activity=OPTIONS.model_copy(update={{"maximum_attempts": 3}}),
    ),
}}
app = App(agents=[Agent(id="survivor", model=model, tools=tools)])
"""


FAST = "ActivityOptions(heartbeat_timeout=timedelta(seconds=2), retry_initial_interval=timedelta(milliseconds=100))"
APP = app_source(
    options=FAST,
    sturdy_deaths=4,
    in_parallel=True,
)
LOCAL_APP = app_source(options="ActivityOptions(local=True)", sturdy_deaths=2, in_parallel=False)


LOCAL_STEP_APP = """
import os
import signal
from pathlib import Path

from tempo_agents import Agent, App
from tempo_agents.activity_options import ActivityOptions

LOG = Path(__file__).with_name("executions.log")


class CrashingModel:
    provider = "test"
    model_id = "crashing"

    async def stream(self, request):
        with LOG.open("a") as file:
            file.write("model 0\\n")
        os.kill(os.getpid(), signal.SIGKILL)
        yield None


agent = Agent(
    id="survivor",
    model=CrashingModel(),
    model_step_activity=ActivityOptions(local=True, maximum_attempts=2),
)
app = App(agents=[agent])
"""


async def _run_with_restarts(
    tmp_path: Path, worker_processes: MakeWorkerProcesses, source: str
) -> tuple[GenerateResult, list[list[str]], int]:
    """Run the agent ``survivor`` of ``source`` on two worker processes, each restarted when it dies; return the
    result, the tools' execution log (name, ctx.attempt) and the number of deaths."""
    processes = worker_processes(source, "loss_app")
    client_app = processes.app
    # Two workers, so that a retried attempt finds one already polling while the dead one is replaced.
    workers = [processes.start() for _ in range(2)]
    try:
        stream = await client_app.agent("survivor").stream("go")
        done = asyncio.create_task(stream.result())
        deaths = await replace_dead_workers(processes, workers, done)
        result = await done
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    executions = [line.split() for line in (tmp_path / "executions.log").read_text().splitlines()]
    return result, executions, deaths


async def test_worker_deaths_never_fail_a_run(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> None:
    result, executions, deaths = await _run_with_restarts(tmp_path, worker_processes, APP)
    # A worker killed by one tool may take the other's attempt with it before it ran: attempts, not lines.
    sturdy = [int(attempt) for name, attempt in executions if name == "sturdy"]
    crasher = [int(attempt) for name, attempt in executions if name == "crasher"]
    assert result.finish_reason == "stop" and result.text == "Survived."
    assert [c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)] == ["done on attempt 5"]
    [error] = [c for c in result.chunks if isinstance(c, ToolErrorChunk)]
    assert error.payload.tool_name == "crasher"
    assert error.payload.error.startswith(
        'Tool "crasher" was stopped: the worker running it was lost 3 times in a row ('
    )
    assert sturdy == sorted(set(sturdy)) and sturdy[-1] == 5  # every execution a new attempt, the last one won
    assert set(crasher) <= {1, 2, 3}
    assert deaths >= 4


async def test_lost_local_calls_are_counted_and_stopped(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> None:
    result, executions, deaths = await _run_with_restarts(tmp_path, worker_processes, LOCAL_APP)
    assert result.finish_reason == "stop" and result.text == "Survived."
    # ctx.attempt counts the local call's starts, although each lost start begins again at attempt 1
    assert executions == [
        ["sturdy", "1"],
        ["sturdy", "2"],
        ["sturdy", "3"],
        ["crasher", "1"],
        ["crasher", "2"],
        ["crasher", "3"],
    ]  # the fourth start of crasher is answered with the error, not run
    assert [c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)] == ["done on attempt 3"]
    [error] = [c for c in result.chunks if isinstance(c, ToolErrorChunk)]
    assert error.payload.tool_name == "crasher"
    assert error.payload.error == (
        'Tool "crasher" was stopped: the worker running it was lost 3 times in a row (it ran as a local activity '
        "and never finished). It may crash its worker; the run goes on without its result."
    )
    assert deaths == 5


async def test_a_local_model_step_that_kills_every_worker_ends_the_run_with_its_error(
    tmp_path: Path, worker_processes: MakeWorkerProcesses
) -> None:
    result, executions, deaths = await _run_with_restarts(tmp_path, worker_processes, LOCAL_STEP_APP)
    assert executions == [["model", "0"], ["model", "0"]]  # the third start is stopped before the model is called
    assert deaths == 2
    assert result.finish_reason == "error"
    [error] = [c for c in result.chunks if isinstance(c, ErrorChunk)]
    assert error.payload.error == (
        "The model step was lost with its worker 2 times in a row (it ran as a local activity and never finished)."
    )
