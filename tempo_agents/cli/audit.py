"""The ``audit`` commands: ``audit verify`` walks a store's audit chain, ``audit export`` prints its records as JSON
lines."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator

from tempo_agents.audit import AuditRecord, parse_audit_time, read_chain, verify_chain
from tempo_agents.cli._console import CliError, out
from tempo_agents.errors import ConfigurationError
from tempo_agents.store import Store
from tempo_agents.store.url import DEFAULT_STORE_URL, STORE_ENV, open_store

__all__ = ["add_commands", "cmd_export", "cmd_verify"]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``audit verify`` and ``audit export``."""
    audit = commands.add_parser(
        "audit",
        help="check and export a store's audit trail",
        description="The audit trail: every action that changed something, in a hash chain kept by the store.",
    )
    actions = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    verify = actions.add_parser(
        "verify",
        help="walk the chain; exit 1 at the first deleted, inserted or altered record",
        description="Walk the audit chain from its first record and name the first one deleted, inserted or altered.",
    )
    export = actions.add_parser(
        "export",
        help="print the records as JSON lines, oldest first",
        description="Print the audit chain's records as JSON lines (intents and completions alike), oldest first.",
    )
    export.add_argument("--since", metavar="ISO", help="only records from this time on (ISO 8601; UTC without zone)")
    export.add_argument("--until", metavar="ISO", help="only records before this time")
    for parser, handler in ((verify, cmd_verify), (export, cmd_export)):
        parser.add_argument(
            "--store",
            metavar="URL",
            help=f"e.g. postgresql://user:password@host:5432/db (default ${STORE_ENV}, else {DEFAULT_STORE_URL})",
        )
        parser.set_defaults(handler=handler)


def _open(url: str | None) -> Store:
    try:
        return open_store(url)
    except ConfigurationError as error:
        raise CliError(f"--store: {error.message}", 2) from None


def _time(value: str | None, option: str) -> str | None:
    try:
        return parse_audit_time(value)
    except ValueError:
        raise CliError(f"{option}: not an ISO 8601 time: {value}", 2) from None


async def cmd_verify(args: argparse.Namespace) -> int:
    """Verify the chain of ``--store``; print what was found (exit 1 when it is broken)."""
    store = _open(args.store)
    try:
        walk = await verify_chain(read_chain(store.audit_chain))
    finally:
        await store.close()
    if walk.broken is not None:
        raise CliError(f"audit chain broken: {walk.broken.message} ({walk.records} records read)", 1)
    out(f"audit chain intact: {walk.records} records")
    return 0


async def _between(records: AsyncIterator[AuditRecord], since: str | None, until: str | None) -> AsyncIterator[str]:
    async for record in records:
        at = record.entry.at
        if (since is None or at >= since) and (until is None or at < until):
            yield json.dumps(record.wire(), ensure_ascii=False, separators=(",", ":"))


async def cmd_export(args: argparse.Namespace) -> int:
    """Print the records of ``--store`` between ``--since`` and ``--until`` as JSON lines."""
    since, until = _time(args.since, "--since"), _time(args.until, "--until")
    store = _open(args.store)
    try:
        async for line in _between(read_chain(store.audit_chain), since, until):
            out(line)
    finally:
        await store.close()
    return 0
