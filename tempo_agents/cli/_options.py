"""Command-line options several commands share: which App to serve, and which Temporal server to use."""

from __future__ import annotations

import argparse

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"
TOKEN_ENV = "TEMPO_AGENTS_API_TOKEN"
SINGLE_TOKEN_PRINCIPAL = "api"
"""The principal named by ``--auth-token`` (or ``TEMPO_AGENTS_API_TOKEN``)."""


def add_app_options(command: argparse.ArgumentParser, *, required: bool) -> None:
    """``--app``, and ``--store``/``--task-queue`` to override the App's own."""
    command.add_argument(
        "--app",
        required=required,
        metavar="MODULE:ATTR",
        help="the App to serve, e.g. myproject.agents:app (importable from the current directory)",
    )
    command.add_argument("--store", metavar="URL", help="override the App's store, e.g. sqlite:///runs.db")
    command.add_argument("--task-queue", metavar="NAME", help="override the App's task queue")


def add_server_options(command: argparse.ArgumentParser) -> None:
    """``--address`` and ``--namespace`` of the Temporal server."""
    command.add_argument("--address", default=DEFAULT_ADDRESS, help=f"Temporal frontend (default {DEFAULT_ADDRESS})")
    command.add_argument("--namespace", default=DEFAULT_NAMESPACE, help="Temporal namespace (default default)")


def add_api_options(command: argparse.ArgumentParser) -> None:
    """``--api-host`` and ``--api-port`` of the HTTP API."""
    from tempo_agents.server.serving import DEFAULT_API_HOST, DEFAULT_API_PORT

    command.add_argument(
        "--api-host", default=DEFAULT_API_HOST, help=f"address the HTTP API listens on (default {DEFAULT_API_HOST})"
    )
    command.add_argument(
        "--api-port",
        type=int,
        default=DEFAULT_API_PORT,
        help=f"port of the HTTP API (default {DEFAULT_API_PORT}; 0 picks a free one)",
    )
    command.add_argument(
        "--auth-token",
        metavar="TOKEN",
        help=(
            f"every request but GET /api/health needs 'Authorization: Bearer TOKEN' (principal "
            f"'{SINGLE_TOKEN_PRINCIPAL}'); default ${TOKEN_ENV}"
        ),
    )
    command.add_argument(
        "--tokens-file",
        metavar="PATH",
        help='tokens and the principals they name: JSON {"token": "name"} or lines "token name"',
    )
    command.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the API, e.g. http://localhost:3000 (repeatable; * allows any)",
    )
