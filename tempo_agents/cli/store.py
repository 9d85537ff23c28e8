"""The ``store`` commands: ``store migrate`` creates or upgrades a store's tables ahead of the workers;
``store rotate-keys`` re-encrypts what the store keeps of runs under the newest encryption key."""

from __future__ import annotations

import argparse

from tempo_agents.cli._console import CliError, out
from tempo_agents.encryption import (
    KEYS_ENVIRONMENT_VARIABLE,
    Keyring,
    TamperedError,
    UnknownKeyError,
    keyring_from_environment,
    keyring_from_file,
)
from tempo_agents.errors import ConfigurationError
from tempo_agents.store.key_rotation import KeyRotatingStore, RotatedTable
from tempo_agents.store.url import DEFAULT_STORE_URL, STORE_ENV, open_store

__all__ = ["add_commands", "cmd_migrate", "cmd_rotate_keys"]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``store migrate`` and ``store rotate-keys``."""
    store = commands.add_parser(
        "store",
        help="manage a store (run journals, transcripts, memory threads)",
        description="Manage the store that runs keep their journals, transcripts and memory threads in.",
    )
    actions = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    migrate = actions.add_parser(
        "migrate",
        help="create or upgrade the store's tables now",
        description=(
            "Create or upgrade the store's tables now, for operators who prefer not to let workers do it on "
            "first use (they do, under a lock, when nobody ran this). Safe to run any number of times."
        ),
    )
    migrate.add_argument(
        "--store",
        metavar="URL",
        help=f"e.g. postgresql://user:password@host:5432/db (default ${STORE_ENV}, else {DEFAULT_STORE_URL})",
    )
    migrate.set_defaults(handler=cmd_migrate)
    rotate = actions.add_parser(
        "rotate-keys",
        help="re-encrypt what the store keeps of runs under the newest encryption key",
        description=(
            "Re-encrypt every sealed value of the store (and seal those written in clear) under the newest "
            f"encryption key: the first of ${KEYS_ENVIRONMENT_VARIABLE} or of --keys-file. In batches, each "
            "committed on its own; safe beside running workers and safe to stop and run again. Give every worker "
            "the new keys first, then run this, then drop the old key."
        ),
    )
    rotate.add_argument(
        "--store",
        metavar="URL",
        help=f"e.g. postgresql://user:password@host:5432/db (default ${STORE_ENV}, else {DEFAULT_STORE_URL})",
    )
    rotate.add_argument(
        "--keys-file",
        metavar="FILE",
        help=(
            f'a JSON file {{"keys": [{{"id": ..., "key": ...}}]}}, newest first (default ${KEYS_ENVIRONMENT_VARIABLE})'
        ),
    )
    rotate.add_argument("--batch-size", type=int, default=500, metavar="N", help="rows per transaction (500)")
    rotate.set_defaults(handler=cmd_rotate_keys)


async def cmd_migrate(args: argparse.Namespace) -> int:
    """Migrate the store ``--store`` names and print what was done."""
    try:
        store = open_store(args.store)
    except ConfigurationError as error:
        raise CliError(f"--store: {error.message}", 2) from None
    try:
        out(await store.migrate())
    finally:
        await store.close()
    return 0


def _keyring(keys_file: str | None) -> Keyring:
    try:
        keyring = keyring_from_file(keys_file) if keys_file else keyring_from_environment()
    except ConfigurationError as error:
        raise CliError(f"{'--keys-file' if keys_file else KEYS_ENVIRONMENT_VARIABLE}: {error.message}", 2) from None
    if keyring is None:
        raise CliError(f"no encryption keys: set {KEYS_ENVIRONMENT_VARIABLE} or give --keys-file", 2)
    return keyring


async def cmd_rotate_keys(args: argparse.Namespace) -> int:
    """Re-encrypt the store ``--store`` names under the newest key, printing each batch's progress."""
    if args.batch_size < 1:
        raise CliError("--batch-size must be at least 1", 2)
    keyring = _keyring(args.keys_file)
    try:
        store = open_store(args.store, keyring=keyring)
    except ConfigurationError as error:
        raise CliError(f"--store: {error.message}", 2) from None
    try:
        if not isinstance(store, KeyRotatingStore):
            raise CliError(f"{type(store).__name__} cannot rotate keys", 2)
        report = await store.rotate_keys(args.batch_size, _print_progress)
    except (UnknownKeyError, TamperedError) as error:
        raise CliError(f"stopped: {error}") from None
    finally:
        await store.close()
    total = sum(table.resealed for table in report)
    meanwhile = sum(table.changed_meanwhile for table in report)
    out(
        f"{total} value(s) re-encrypted under {keyring.current.id}"
        + (f"; {meanwhile} rewritten by workers meanwhile: run it again to check them" if meanwhile else "")
    )
    return 0


def _print_progress(table: RotatedTable) -> None:
    out(table.line())
