"""How ``worker``, ``serve`` and ``run`` reach a Temporal server that wants TLS, mTLS or an API key (Temporal Cloud,
or a cluster installed with Temporal's Helm chart): the options, their environment variables, what App.connect gets."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.service import TLSConfig
from temporalio.testing import WorkflowEnvironment

from tempo_agents.cli._console import CliError
from tempo_agents.cli._options import connection_options
from tempo_agents.cli.main import build_parser

COMMANDS = ("worker", "serve", "run")
ROOT = Path(__file__).resolve().parents[2]


def parse(command: str, *options: str) -> dict[str, object]:
    extra = ["agent", "hello"] if command == "run" else []
    args = build_parser().parse_args([command, "--app", "m:app", *options, *extra])
    return connection_options(args)


@pytest.mark.parametrize("command", COMMANDS)
def test_plain_text_by_default(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "TEMPORAL_API_KEY",
        "TEMPORAL_TLS",
        "TEMPORAL_TLS_CERT",
        "TEMPORAL_TLS_KEY",
        "TEMPORAL_TLS_CA",
        "TEMPO_AGENTS_ENCRYPTION_KEYS",
    ):
        monkeypatch.delenv(name, raising=False)
    assert parse(command) == {"tls": None, "api_key": None, "encryption_keys": None}
    assert parse(command, "--tls") == {"tls": True, "api_key": None, "encryption_keys": None}


@pytest.mark.parametrize("command", COMMANDS)
def test_mtls_reads_the_certificate_files(command: str, tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_bytes(b"CERT")
    (tmp_path / "k.pem").write_bytes(b"KEY")
    (tmp_path / "ca.pem").write_bytes(b"CA")
    options = parse(
        command,
        *("--tls-cert", str(tmp_path / "c.pem"), "--tls-key", str(tmp_path / "k.pem")),
        *("--tls-ca", str(tmp_path / "ca.pem"), "--tls-server-name", "temporal.internal"),
    )
    tls = options["tls"]
    assert isinstance(tls, TLSConfig)
    assert (tls.client_cert, tls.client_private_key, tls.server_root_ca_cert) == (b"CERT", b"KEY", b"CA")
    assert tls.domain == "temporal.internal"


def test_settings_come_from_the_temporal_cli_environment_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "c.pem").write_bytes(b"CERT")
    (tmp_path / "k.pem").write_bytes(b"KEY")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "ns.acct.tmprl.cloud:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "ns.acct")
    monkeypatch.setenv("TEMPORAL_API_KEY", "secret-key")
    args = build_parser().parse_args(["worker", "--app", "m:app"])
    assert (args.address, args.namespace) == ("ns.acct.tmprl.cloud:7233", "ns.acct")
    # An API key alone: tls stays None, which temporalio turns into TLS because there is a key.
    assert connection_options(args) == {"tls": None, "api_key": "secret-key", "encryption_keys": None}
    monkeypatch.delenv("TEMPORAL_API_KEY")
    monkeypatch.setenv("TEMPORAL_TLS_CERT", str(tmp_path / "c.pem"))
    monkeypatch.setenv("TEMPORAL_TLS_KEY", str(tmp_path / "k.pem"))
    tls = connection_options(build_parser().parse_args(["serve", "--app", "m:app"]))["tls"]
    assert isinstance(tls, TLSConfig) and tls.client_cert == b"CERT"


def test_a_certificate_without_its_key_or_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="go together") as caught:
        parse("worker", "--tls-cert", str(tmp_path / "c.pem"))
    assert caught.value.exit_code == 2
    with pytest.raises(CliError, match="--tls-ca"):
        parse("worker", "--tls-ca", str(tmp_path / "missing.pem"))


def test_the_api_key_is_never_echoed_in_help(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEMPORAL_API_KEY", "secret-key")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["worker", "--help"])
    assert "secret-key" not in capsys.readouterr().out


async def test_tls_and_an_api_key_reach_the_connection(temporal_env: WorkflowEnvironment) -> None:
    """Against the plain-text test server: without the options the worker connects; with ``--tls``, or with an API
    key (which implies TLS), the TLS handshake fails at once and the CLI says so in one line."""
    address = temporal_env.client.service_client.config.target_host
    base = [sys.executable, "-m", "tempo_agents.cli", "worker", "--app", "examples/reference_parity.py:app"]
    base += ["--address", address, "--task-queue", f"tls-{uuid.uuid4()}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
    for extra in (["--tls"], ["--api-key", "some-key"]):
        result = await asyncio.to_thread(
            subprocess.run, [*base, *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 1, (extra, result.stdout, result.stderr)
        assert f"cannot reach Temporal at {address}" in result.stderr
        assert "InvalidContentType" in result.stderr, result.stderr  # a TLS record where HTTP/2 was expected
    plain = await asyncio.create_subprocess_exec(
        *base, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        assert plain.stdout is not None
        line = await asyncio.wait_for(plain.stdout.readline(), 60)
        assert b"polling task queue" in line, line
    finally:
        plain.terminate()
        await plain.wait()
