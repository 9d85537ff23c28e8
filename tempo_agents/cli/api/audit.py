"""``tempo-agents api audit``: the audit trail of a running HTTP API (``GET /api/audit``), filtered and paged."""

from __future__ import annotations

import argparse
from typing import Any

from tempo_agents.cli.api.client import ApiClient, Command
from tempo_agents.cli.api.output import Output, table

__all__ = ["add_audit_command"]

_FILTERS = ("principal", "tenant", "action", "target", "since", "until")


def add_audit_command(groups: argparse._SubParsersAction[argparse.ArgumentParser], command: Command) -> None:
    """Register ``api audit`` (``command`` makes one command of a group)."""
    audit = command(groups, "audit", _audit, "actions that changed something, newest first")
    for name in _FILTERS:
        audit.add_argument(f"--{name}", help="ISO 8601 time" if name in ("since", "until") else None)
    audit.add_argument("--per-page", type=int, default=50)
    audit.add_argument("--cursor", help="nextCursor of the previous page")


async def _audit(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    chosen = {name: getattr(args, name) for name in _FILTERS}
    params = {key: value for key, value in chosen.items() if value is not None}
    params["perPage"] = args.per_page
    if args.cursor is not None:
        params["cursor"] = args.cursor
    page = await client.request("GET", "audit", params=params)

    def readable(data: dict[str, Any]) -> str:
        rows = [
            [
                r["at"],
                r.get("principal") or "",
                r.get("tenant") or "",
                r["action"],
                r.get("target") or "",
                r["outcome"] + (f" {r['status']}" if r.get("status") else ""),
            ]
            for r in data["records"]
        ]
        text = table(rows, ["AT", "PRINCIPAL", "TENANT", "ACTION", "TARGET", "OUTCOME"])
        return text + (f"\nmore: --cursor {data['nextCursor']}" if data.get("nextCursor") else "")

    output.result(page, readable)
    return 0
