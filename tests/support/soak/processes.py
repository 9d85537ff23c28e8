"""What ``/proc`` says of a process: resident memory, open file descriptors, threads; and of the machine: its
load and what else keeps the CPUs busy. Linux only (the soak runs there)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any


def process_figures(pid: int) -> dict[str, Any] | None:
    """``{"pid", "rss_mb", "fds", "threads"}`` of a live process, or ``None`` when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields.get("State", "").strip().startswith("Z"):
        return None
    rss_kb = int(fields.get("VmRSS", "0 kB").split()[0])
    return {"pid": pid, "rss_mb": round(rss_kb / 1024, 2), "fds": fds, "threads": int(fields["Threads"])}


def tree_rss_mb(pid: int) -> float | None:
    """Resident memory of a process and its direct children (the postmaster and its sessions), in MB; shared pages
    are counted in each, so it is an upper bound."""
    own = process_figures(pid)
    if own is None:
        return None
    total = float(own["rss_mb"])
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            child = process_figures(int(stat.parent.name))
            total += float(child["rss_mb"]) if child else 0.0
    return round(total, 2)


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def busiest_processes(limit: int = 12) -> list[str]:
    """The commands using the most CPU right now (``ps``), to say what else ran beside a measurement."""
    try:
        listing = subprocess.run(
            ["ps", "-eo", "pcpu,rss,args", "--sort=-pcpu"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [" ".join(line.split())[:160] for line in listing.splitlines()[1 : limit + 1]]
