"""What an operator writes to turn sign-in on: the provider's settings (in code, flags and the environment) and a
tokens file whose entries carry roles; each mistake is refused when the server starts, saying what is wrong."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tempo_agents import App
from tempo_agents.cli._console import CliError
from tempo_agents.cli.oidc_options import add_oidc_options, oidc_settings
from tempo_agents.errors import ConfigurationError
from tempo_agents.identity import ALL_TENANTS, OidcSettings, Role, load_roles, load_token_principals
from tests.support.http_api import parity_agent, served


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"issuer": "https://id.example", "audience": "api", "algorithms": ["HS256"]}, "never none or HMAC"),
        ({"issuer": "https://id.example", "audience": "api", "algorithms": ["none"]}, "refusing the signature"),
        ({"issuer": "https://id.example", "audience": ""}, "need an audience"),
        ({"issuer": "id.example", "audience": "api"}, "must be an http(s) URL"),
        ({"issuer": "https://id.example", "audience": "api", "leeway_seconds": 3600}, "between 0 and 300"),
    ],
)
def test_bad_provider_settings_are_refused_when_made(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        OidcSettings(**settings)  # type: ignore[arg-type]


def _parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_oidc_options(parser)
    return parser.parse_args(list(argv))


def test_flags_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_AGENTS_OIDC_ISSUER", "https://id.example/realms/a")
    monkeypatch.setenv("TEMPO_AGENTS_OIDC_AUDIENCE", "api,other-api")
    monkeypatch.setenv("TEMPO_AGENTS_OIDC_DISABLED", "mallory, eve")
    monkeypatch.setenv("TEMPO_AGENTS_OIDC_LEEWAY", "10")
    from_env = oidc_settings(_parsed())
    assert from_env is not None
    assert from_env.issuer == "https://id.example/realms/a" and from_env.audiences == ["api", "other-api"]
    assert from_env.disabled == frozenset({"mallory", "eve"}) and from_env.leeway_seconds == 10
    flagged = oidc_settings(_parsed("--oidc-audience", "flagged", "--oidc-principal-claim", "email"))
    assert flagged is not None and flagged.audiences == ["flagged"] and flagged.principal_claim == "email"
    monkeypatch.setenv("TEMPO_AGENTS_OIDC_LEEWAY", "soon")
    with pytest.raises(CliError, match="must be a number of seconds"):
        oidc_settings(_parsed())


def test_without_an_issuer_there_is_no_provider_and_a_lone_flag_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("TEMPO_AGENTS_OIDC_ISSUER", "TEMPO_AGENTS_OIDC_AUDIENCE"):
        monkeypatch.delenv(variable, raising=False)
    assert oidc_settings(_parsed()) is None
    with pytest.raises(CliError, match="--oidc-client-id need"):
        oidc_settings(_parsed("--oidc-client-id", "dashboard"))


def test_a_tokens_file_entry_carries_roles_and_one_without_is_an_admin_everywhere(tmp_path: Path) -> None:
    file = tmp_path / "tokens.json"
    file.write_text(
        '{"tok-root": "root", "tok-dana": {"name": "dana", "groups": ["ops"], '
        '"roles": {"acme": ["operator"], "*": ["viewer"]}}}'
    )
    principals = load_token_principals(file)
    root, dana = principals["tok-root"], principals["tok-dana"]
    assert root.roles == {ALL_TENANTS: frozenset({Role.ADMIN})} and root.tenants_for(Role.OPERATOR) is None
    assert dana.groups == ("ops",)
    assert dana.may(Role.OPERATOR, "acme") and not dana.may(Role.OPERATOR, "globex")
    assert dana.may(Role.VIEWER, "globex")
    bad = tmp_path / "bad.json"
    bad.write_text('{"tok": {"name": "x", "roles": {"acme": ["superuser"]}}}')
    with pytest.raises(ConfigurationError, match="must map tokens to names"):
        load_token_principals(bad)


def test_roles_read_inline_or_from_a_json_or_toml_file(tmp_path: Path) -> None:
    expected = {"alice": {"acme": frozenset({Role.OPERATOR}), "globex": frozenset({Role.VIEWER})}}
    inline = '{"alice": {"acme": ["operator"], "globex": ["viewer"]}}'
    (tmp_path / "roles.json").write_text(inline)
    (tmp_path / "roles.toml").write_text('[alice]\nacme = ["operator"]\nglobex = ["viewer"]\n')
    assert load_roles(inline) == load_roles(str(tmp_path / "roles.json")) == load_roles(str(tmp_path / "roles.toml"))
    assert load_roles(inline) == expected
    (tmp_path / "tokens.txt").write_text("tok-a alice\ntok-b bob\n")
    tokens = load_token_principals(tmp_path / "tokens.txt", load_roles(inline))
    assert (tokens["tok-a"].roles, tokens["tok-b"].roles) == (expected["alice"], {})  # bob is named by no role
    with pytest.raises(ConfigurationError, match="the inline roles mapping is not valid JSON"):
        load_roles("{alice")
    with pytest.raises(ConfigurationError, match="must map principals to their roles"):
        load_roles('{"alice": ["operator"]}')


async def test_a_tokens_file_s_roles_reach_the_server(tmp_path: Path) -> None:
    file = tmp_path / "tokens.json"
    file.write_text('{"tok-dana": {"name": "dana", "roles": {"acme": ["operator"], "*": ["viewer"]}}, "tok-r": "root"}')
    app = App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")
    async with served(app, tokens=dict(load_token_principals(file))) as http:
        dana = await http.get("/identity", headers={"Authorization": "Bearer tok-dana"})
        assert dana.json() == {"name": "dana", "groups": [], "roles": {"acme": ["operator"], "*": ["viewer"]}}
        root = await http.get("/identity", headers={"Authorization": "Bearer tok-r"})
        assert root.json() == {"name": "root", "groups": [], "roles": {"*": ["admin"]}}
        refused = await http.get("/identity", headers={"Authorization": "Bearer nope"})
        assert refused.status_code == 401 and refused.json() == {"error": "Invalid or expired token"}
        assert refused.headers["www-authenticate"] == "Bearer"  # static tokens only: the answer it always was
