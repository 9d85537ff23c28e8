"""Command-line options several commands share: which App to serve, and which Temporal server to use."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempo_agents.cli._console import CliError
from tempo_agents.notifications import NOTIFICATIONS_ENV
from tempo_agents.store.pool_size import STORE_POOL_SIZE_ENV

__all__ = [
    "ADDRESS_ENV",
    "API_KEY_ENV",
    "APP_ENV",
    "CODEC_CORS_ENV",
    "DEFAULT_ADDRESS",
    "DEFAULT_NAMESPACE",
    "ENCRYPTION_KEYS_FILE_ENV",
    "NAMESPACE_ENV",
    "SINGLE_TOKEN_PRINCIPAL",
    "TLS_CA_ENV",
    "TLS_CERT_ENV",
    "TLS_ENV",
    "TLS_KEY_ENV",
    "TLS_SERVER_NAME_ENV",
    "TOKEN_ENV",
    "WEBHOOK_SOURCES_ENV",
    "add_api_options",
    "add_app_options",
    "add_encryption_options",
    "add_server_options",
    "connection_options",
]

if TYPE_CHECKING:
    from temporalio.service import TLSConfig

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"
TOKEN_ENV = "TEMPO_AGENTS_API_TOKEN"
SINGLE_TOKEN_PRINCIPAL = "api"
"""The principal named by ``--auth-token`` (or ``TEMPO_AGENTS_API_TOKEN``)."""

# The environment variables the Temporal CLI reads for the same settings: a container sets them once.
ADDRESS_ENV = "TEMPORAL_ADDRESS"
NAMESPACE_ENV = "TEMPORAL_NAMESPACE"
API_KEY_ENV = "TEMPORAL_API_KEY"
TLS_ENV = "TEMPORAL_TLS"
TLS_CERT_ENV = "TEMPORAL_TLS_CERT"
TLS_KEY_ENV = "TEMPORAL_TLS_KEY"
TLS_CA_ENV = "TEMPORAL_TLS_CA"
TLS_SERVER_NAME_ENV = "TEMPORAL_TLS_SERVER_NAME"


ENCRYPTION_KEYS_FILE_ENV = "TEMPO_AGENTS_ENCRYPTION_KEYS_FILE"
"""The default of ``--encryption-keys``: a JSON keys file (a Kubernetes Secret mounted as a file)."""
CODEC_CORS_ENV = "TEMPO_AGENTS_CODEC_CORS_ORIGINS"
"""The default of ``--codec-cors-origin``: comma-separated origins of Temporal UIs that call the codec server."""


APP_ENV = "TEMPO_AGENTS_APP"
"""The default of ``--app``: an image built for one App sets it once, and its commands need no ``--app``."""


def add_app_options(command: argparse.ArgumentParser, *, required: bool) -> None:
    """``--app`` (default ``$TEMPO_AGENTS_APP``), and ``--store``/``--task-queue`` to override the App's own."""
    default = os.environ.get(APP_ENV) or None
    command.add_argument(
        "--app",
        required=required and default is None,
        default=default,
        metavar="MODULE:ATTR|DIR/",
        help=(
            "the App to serve, e.g. myproject.agents:app (importable from the current directory), or an app "
            f"directory of file-based agents, e.g. examples/fs_app/ (default ${APP_ENV})"
        ),
    )
    command.add_argument("--store", metavar="URL", help="override the App's store, e.g. sqlite:///runs.db")
    command.add_argument(
        "--store-pool-size",
        type=_pool_size,
        action=_PoolSizeToEnvironment,
        metavar="N",
        help=(
            f"connections of a PostgreSQL store's pool (default ${STORE_POOL_SIZE_ENV}, else 10; a pool_size "
            "parameter in the store URL wins)"
        ),
    )
    command.add_argument("--task-queue", metavar="NAME", help="override the App's task queue")
    command.add_argument(
        "--notifications",
        default=os.environ.get(NOTIFICATIONS_ENV) or None,
        metavar="FILE",
        help=(
            "notification channels (webhooks, Slack, email) of the App's runs, a JSON or TOML file; replaces the "
            f"App's own (default ${NOTIFICATIONS_ENV})"
        ),
    )


def _pool_size(text: str) -> int:
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 1:
        raise argparse.ArgumentTypeError(f"a number of connections, 1 or more: {text!r}")
    return size


class _PoolSizeToEnvironment(argparse.Action):
    """The pool size goes where the store reads it when it opens, whichever command opens it."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: str | None = None
    ) -> None:
        os.environ[STORE_POOL_SIZE_ENV] = str(values)
        setattr(namespace, self.dest, values)


def add_server_options(command: argparse.ArgumentParser) -> None:
    """``--address`` and ``--namespace`` of the Temporal server, and how to authenticate to it: TLS (with a client
    certificate for mTLS) and an API key (Temporal Cloud). Each defaults to the Temporal CLI's environment
    variable, so a container or a Kubernetes Secret sets it without putting it on the command line."""
    env = os.environ.get
    command.add_argument(
        "--address",
        default=env(ADDRESS_ENV) or DEFAULT_ADDRESS,
        help=f"Temporal frontend (default ${ADDRESS_ENV}, else {DEFAULT_ADDRESS})",
    )
    command.add_argument(
        "--namespace",
        default=env(NAMESPACE_ENV) or DEFAULT_NAMESPACE,
        help=f"Temporal namespace (default ${NAMESPACE_ENV}, else default)",
    )
    command.add_argument(
        "--api-key",
        default=env(API_KEY_ENV) or None,
        metavar="KEY",
        help=f"API key (Temporal Cloud; implies TLS); prefer ${API_KEY_ENV} to keep it off the command line",
    )
    command.add_argument(
        "--tls",
        action="store_true",
        default=(env(TLS_ENV) or "").lower() in ("1", "true", "yes"),
        help=f"connect with TLS (system CA roots unless --tls-ca; default ${TLS_ENV})",
    )
    command.add_argument(
        "--tls-cert", default=env(TLS_CERT_ENV) or None, metavar="PATH",
        help=f"client certificate (PEM) for mTLS; implies --tls (default ${TLS_CERT_ENV})",
    )  # fmt: skip
    command.add_argument(
        "--tls-key", default=env(TLS_KEY_ENV) or None, metavar="PATH",
        help=f"the client certificate's private key (PEM) (default ${TLS_KEY_ENV})",
    )  # fmt: skip
    command.add_argument(
        "--tls-ca", default=env(TLS_CA_ENV) or None, metavar="PATH",
        help=f"CA certificate (PEM) the server's certificate is checked against; implies --tls (default ${TLS_CA_ENV})",
    )  # fmt: skip
    command.add_argument(
        "--tls-server-name", default=env(TLS_SERVER_NAME_ENV) or None, metavar="NAME",
        help=f"name the server's certificate must match, if not the address's host (default ${TLS_SERVER_NAME_ENV})",
    )  # fmt: skip
    add_encryption_options(command)


def add_encryption_options(command: argparse.ArgumentParser) -> None:
    """``--encryption-keys``: the keys file that seals what runs send through Temporal."""
    command.add_argument(
        "--encryption-keys",
        default=os.environ.get(ENCRYPTION_KEYS_FILE_ENV) or None,
        metavar="FILE",
        help=(
            'encrypt every payload sent through Temporal under the keys of this JSON file ({"keys": [{"id": ..., '
            f'"key": <base64 of 32 bytes>}}]}}, newest first; default ${ENCRYPTION_KEYS_FILE_ENV}); without it, the '
            "App's own keys or $TEMPO_AGENTS_ENCRYPTION_KEYS"
        ),
    )


def connection_options(args: argparse.Namespace) -> dict[str, Any]:
    """``tls``, ``api_key`` and ``encryption_keys`` for ``connect`` from the options of :func:`add_server_options`."""
    from temporalio.service import TLSConfig

    if bool(args.tls_cert) != bool(args.tls_key):
        raise CliError("--tls-cert and --tls-key go together (a client certificate and its private key)", 2)

    def read(option: str, path: str | None) -> bytes | None:
        if path is None:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as error:
            raise CliError(f"{option} {path}: {error.strerror or error}", 2) from None

    tls: bool | TLSConfig | None = None  # None: TLS exactly when there is an API key
    if args.tls_cert or args.tls_ca or args.tls_server_name:
        tls = TLSConfig(
            client_cert=read("--tls-cert", args.tls_cert),
            client_private_key=read("--tls-key", args.tls_key),
            server_root_ca_cert=read("--tls-ca", args.tls_ca),
            domain=args.tls_server_name,
        )
    elif args.tls:
        tls = True
    return {"tls": tls, "api_key": args.api_key, "encryption_keys": args.encryption_keys}


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


WEBHOOK_SOURCES_ENV = "TEMPO_AGENTS_WEBHOOK_SOURCES"


def add_api_options(command: argparse.ArgumentParser) -> None:
    """``--api-host`` and ``--api-port`` of the HTTP API."""
    # Imported here, not above: FastAPI and uvicorn load only for the commands that serve (a start-up cost, no cycle).
    from tempo_agents.server.request_limits import MAX_BODY_BYTES
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
        help=(
            'tokens and the principals they name: JSON {"token": "name"} (or {"token": {"name": ..., "groups": [...], '
            '"roles": {"tenant": ["operator"]}}}) or lines "token name"'
        ),
    )
    command.add_argument(
        "--roles",
        metavar="FILE|JSON",
        help=(
            'roles per principal and tenant for the static tokens: inline JSON {"alice": {"acme": ["operator"], '
            '"globex": ["viewer"]}} or a JSON or TOML file of the same; a principal it does not name holds none '
            "(default: every token is an admin everywhere, unless its tokens-file entry gives roles)"
        ),
    )
    command.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the API, e.g. http://localhost:3000 (repeatable; * allows any)",
    )
    command.add_argument(
        "--max-body-bytes",
        type=_positive_int,
        default=MAX_BODY_BYTES,
        metavar="BYTES",
        help=f"the largest request body the API reads; larger ones are a 413 (default {MAX_BODY_BYTES}, 1 MiB)",
    )
    command.add_argument(
        "--webhook-sources",
        default=os.environ.get(WEBHOOK_SOURCES_ENV) or None,
        metavar="FILE",
        help=(
            "webhook sources (TOML, [sources.<name>] tables naming the agent, template and the environment variables "
            f"that hold their secrets), each served at POST /api/events/<name> (default ${WEBHOOK_SOURCES_ENV})"
        ),
    )
    command.add_argument(
        "--codec-cors-origin",
        action="append",
        default=[origin for origin in os.environ.get(CODEC_CORS_ENV, "").split(",") if origin.strip()],
        metavar="ORIGIN",
        help=(
            "the origin of a Temporal UI that decodes payloads with this API's /codec routes, e.g. "
            f"https://temporal.example.com (repeatable; credentials allowed; default ${CODEC_CORS_ENV}, dev: its UI)"
        ),
    )
    command.add_argument(
        "--temporal-ui-url",
        metavar="URL",
        default=os.environ.get("TEMPO_AGENTS_TEMPORAL_UI_URL"),
        help="the Temporal UI the dashboard links runs to (default $TEMPO_AGENTS_TEMPORAL_UI_URL; dev: its own UI)",
    )
