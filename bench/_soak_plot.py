"""The soak's samples as one PNG (matplotlib, the ``bench`` extra): memory, descriptors, threads and asyncio tasks
of each process, the store's size and the load, and the latencies, against the soak's minutes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROCESSES = {
    "dev-server": "tab:blue",
    "api": "tab:orange",
    "worker-steady": "tab:green",
    "worker-killed": "tab:red",
    "soak": "tab:purple",
}
"""Each process and its colour, the same in every panel."""


def plot(figures: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = figures["samples"]
    minutes = [s["t"] / 60 for s in samples]
    fig, axes = plt.subplots(3, 2, figsize=(13, 11), sharex=True)
    panels = (
        (axes[0][0], "rss_mb", "resident memory (MB)"),
        (axes[0][1], "fds", "open file descriptors"),
        (axes[1][0], "threads", "threads"),
        (axes[1][1], "tasks", "asyncio tasks"),
    )
    for axis, measure, title in panels:
        for process, colour in PROCESSES.items():
            values = [s["processes"].get(process, {}).get(measure) for s in samples]
            if any(v is not None for v in values):
                shown = [float("nan") if v is None else v for v in values]
                axis.plot(minutes, shown, label=process, lw=1, color=colour)
        axis.set_title(title)
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    store = axes[2][0]
    store.plot(minutes, [s.get("storeMb") or float("nan") for s in samples], color="tab:brown", label="store (MB)")
    store.set_title("store size (MB) and load average (1 min)")
    load = store.twinx()
    load.plot(minutes, [s["load"][0] for s in samples], color="tab:gray", lw=0.8, label="load")
    store.grid(alpha=0.3)
    latency = axes[2][1]
    for what, series in figures["latencySeries"].items():
        if series:
            latency.scatter([t / 60 for t, _ in series], [v for _, v in series], s=3, label=what, alpha=0.5)
    for outage in figures.get("outages", []):
        latency.axvline(outage["at"] / 60, color="red", lw=0.8, alpha=0.6)
    latency.set_yscale("log")
    latency.set_title("latency (s): starts, first chunks, resumes; red: database stopped")
    latency.legend(fontsize=8)
    latency.grid(alpha=0.3)
    for axis in axes[2]:
        axis.set_xlabel("minutes")
    verdict = figures["verdict"]
    machine = figures["machine"]
    fig.suptitle(
        f"soak on {figures['store']}, {figures['minutes']:g} min, {verdict['runs']} runs, {verdict['kills']} worker "
        f"SIGKILLs, verdict {'pass' if verdict['passed'] else 'FAIL'}; {machine['cpus']} CPUs, load median "
        f"{machine['loadDuring']['median']}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
