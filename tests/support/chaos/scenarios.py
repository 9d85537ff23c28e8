"""The chaos scenarios: random worker kills, consecutive deaths during one call, SIGKILLs of the Temporal dev server,
each over a ``ChaosWorld`` (``world.py``). ``tests/durability/test_chaos.py`` and ``bench/chaos.py`` drive them; the
verdict is ``tests/support/chaos/check.py``'s.

Nothing here configures the runtime (heartbeat timeouts, retry policies): the runs use the defaults, which
are what the guarantees are about.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence

from tests.support.chaos.app import LONG_CALLS
from tests.support.chaos.check import Key, Kill, Report, saved_outcomes
from tests.support.chaos.processes import WORKER_READY_TIMEOUT
from tests.support.chaos.progress import say
from tests.support.chaos.server_chaos import ServerChaos
from tests.support.chaos.world import ChaosWorld

__all__ = ["KILL_MOMENTS", "consecutive_kills_of_one_call", "mix", "random_worker_kills", "server_kills"]


def mix(runs: int, suspend_runs: int) -> list[str]:
    """Agent ids for ``runs`` runs, ``suspend_runs`` of them suspending (spread through the list)."""
    ids = ["chaos"] * runs
    for i in range(min(suspend_runs, runs)):
        ids[(i * runs) // max(1, suspend_runs)] = "chaos-suspend"
    return ids


KILL_MOMENTS = ("random", "after-tool-end")
"""When a kill lands: at a random moment (on a worker that is executing something, within 3 s), or just after a
tool execution ends (its outcome is being saved and reported: the window where a saved result can be lost)."""


async def _pick_victim(world: ChaosWorld, moment: str, rng: random.Random) -> int:
    """A slot whose worker is ready (a worker still starting holds no work: killing it proves nothing)."""
    deadline = time.monotonic() + WORKER_READY_TIMEOUT
    while not any(w is not None and w.ready for w in world.pool.slots):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no worker became ready within {WORKER_READY_TIMEOUT:.0f} s")
        world.pool.supervise()
        await asyncio.sleep(0.05)
    slots = [s for s in range(len(world.pool.slots)) if world.pool.worker(s).ready]
    if moment == "after-tool-end":
        world.tail.poll()
        seen = len(world.tail.ended)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and not world.all_done():
            world.tail.poll()
            for worker, key, _ in world.tail.ended[seen:]:
                slot = world.pool.slot_of(worker)
                if key[1] == "tool" and slot in slots:
                    return slot
            seen = len(world.tail.ended)
            await asyncio.sleep(0.002)
    deadline = time.monotonic() + 3.0
    while True:
        world.tail.poll()
        busy = [s for s in slots if world.tail.busy(world.pool.worker(s).name)]
        if busy or time.monotonic() > deadline or world.all_done():
            return rng.choice(busy or slots)
        await asyncio.sleep(0.002)


async def random_worker_kills(
    world: ChaosWorld,
    *,
    runs: int,
    suspend_runs: int,
    kills: int,
    gap: tuple[float, float],
    settle: float,
    rng: random.Random,
    on_kill: Callable[[Kill], Awaitable[None]] | None = None,
    restart: bool = True,
    moments: Sequence[str] = KILL_MOMENTS,
) -> Report:
    """Start the runs, then SIGKILL a worker ``kills`` times, ``gap`` seconds apart (random), each restarted at once:
    at one of ``moments`` chosen at random, by default half the time one executing something (waiting up to 3 s for
    one to be), half the time the first to finish a tool execution (:data:`KILL_MOMENTS`). Suspended runs are
    resumed as they suspend. Wait up to ``settle`` s after the last kill for the runs to end, and check. Without
    ``restart`` a killed worker stays dead: the others finish its runs."""
    world.may_resume.set()
    await world.start()
    await world.start_runs(mix(runs, suspend_runs))
    for number in range(kills):
        if world.all_done():
            say(f"every run ended after {number} kill(s); no more kills")
            break
        await asyncio.sleep(rng.uniform(*gap))
        world.pool.supervise()
        slot = await _pick_victim(world, rng.choice(moments), rng)
        kill = await world.kill_worker(slot, restart=restart)
        if on_kill is not None:
            await on_kill(kill)
    outcomes = await world.wait_runs(settle)
    return await world.verdict(outcomes)


async def consecutive_kills_of_one_call(
    world: ChaosWorld, *, deaths: int, wait_for_restart: float, settle: float, agent_id: str = "chaos-long"
) -> Report:
    """One run of a long agent (``chaos-long``: the long call is an activity; ``chaos-long-local``: a local
    activity): SIGKILL the worker executing its long call as soon as each attempt starts, ``deaths`` times in a
    row; then let it finish and check."""
    long_call = LONG_CALLS[agent_id]
    await world.pool.start()
    await world.start_runs([agent_id])
    run_id = world.run_ids[0]
    target: Key = (run_id, "tool", long_call, "first")
    seen = 0
    for number in range(deaths):
        deadline = time.monotonic() + wait_for_restart
        victim: str | None = None
        while victim is None and time.monotonic() < deadline and not world.all_done():
            world.tail.poll()
            starts = [w for w, key, _ in world.tail.started if key == target]
            if len(starts) > seen:
                seen = len(starts)
                victim = starts[-1]
            else:
                await asyncio.sleep(0.01)
        if victim is None:
            state = "the run ended" if world.all_done() else f"no new attempt within {wait_for_restart:.0f} s"
            say(f"death {number + 1}/{deaths}: {state}; stopping the kills")
            break
        slot = world.pool.slot_of(victim)
        if slot is None:
            break
        await world.kill_worker(slot)
        say(f"death {number + 1}/{deaths}: killed {victim} during {long_call}")
    outcomes = await world.wait_runs(settle)
    return await world.verdict(outcomes)


async def server_kills(
    world: ChaosWorld, server: ServerChaos, *, runs: int, suspend_runs: int, downtime: float, settle: float
) -> tuple[Report, list[float]]:
    """SIGKILL the dev server while runs are in flight, restart it on the same file; then again once the
    suspending runs are suspended; resume them from this process; wait and check. Also returns, per restart,
    seconds from the restart to the next execution-log line (work resuming)."""
    await world.pool.start()
    await world.start_runs(mix(runs, suspend_runs))
    stalls: list[float] = []

    async def kill_and_restart(why: str, *, then: Callable[[], None] = lambda: None) -> None:
        sent = await server.kill()
        saved = await saved_outcomes(world.app.store, world.run_ids)
        world.kills.append(Kill("server", "server", sent, world.tail.size(), saved))
        say(f"server SIGKILLed ({why}); down for {downtime:.1f} s")
        await asyncio.sleep(downtime)
        await server.restart()
        restarted = time.time()
        world.pool.supervise()
        then()  # suspended runs can only make progress once they are resumed
        mark = world.tail.size()
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and not world.all_done():
            if world.tail.size() > mark:
                break
            await asyncio.sleep(0.05)
        world.tail.poll()
        later = [t for _, _, t in world.tail.started if t >= restarted]
        stalls.append((min(later) - restarted) if later else float("nan"))
        say(f"server restarted; work resumed after {stalls[-1]:.1f} s")

    # In flight: wait until the runs are well under way (some tool executions logged).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        world.tail.poll()
        if len(world.tail.started) >= 3 * runs:
            break
        await asyncio.sleep(0.05)
    await kill_and_restart("runs in flight")
    # Suspended: wait until every suspending run is suspended, then kill it again.
    suspending = [f for f in world.followers if f.agent_id == "chaos-suspend"]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(f.suspended.wait() for f in suspending)), settle)
    await kill_and_restart("runs suspended", then=world.may_resume.set)
    outcomes = await world.wait_runs(settle)
    return await world.verdict(outcomes), stalls
