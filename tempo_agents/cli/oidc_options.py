"""The ``--oidc-*`` options of the commands that serve the HTTP API: the OpenID Connect provider whose tokens it
accepts and through which the dashboard signs people in. Each has an environment variable (``TEMPO_AGENTS_OIDC_*``,
listed in :data:`tempo_agents.identity.oidc_settings.ENVIRONMENT`); an option given wins over its variable."""

from __future__ import annotations

import argparse
import os

from tempo_agents.cli._console import CliError
from tempo_agents.errors import ConfigurationError
from tempo_agents.identity import OidcSettings
from tempo_agents.identity.oidc_settings import ENVIRONMENT

__all__ = ["add_oidc_options", "oidc_settings"]

_OPTIONS = {
    "issuer": ("URL", "the provider's issuer URL, as its tokens' iss says it; turns JWT bearer tokens on"),
    "audience": ("AUD", "the aud tokens must carry (comma-separated for several)"),
    "client_id": ("ID", "the dashboard's client id at the provider: the dashboard signs people in through it"),
    "client_secret": ("SECRET", "the client's secret (a confidential client); prefer the environment variable"),
    "principal_claim": ("CLAIM", "the claim naming the principal (default sub; e.g. email)"),
    "groups_claim": ("CLAIM", "the claim listing its groups (default groups)"),
    "roles_claim": ("CLAIM", "the claim holding its roles per tenant (default roles; dotted paths read nested claims)"),
    "tenants_claim": ("CLAIM", "the claim listing the tenants bare roles hold in"),
    "algorithms": ("ALGS", "accepted signature algorithms, comma-separated (default RS256,ES256,PS256)"),
    "leeway_seconds": ("SECONDS", "how far exp and nbf may be off (default 30)"),
    "disabled": ("NAMES", "principals refused even with a valid token, comma-separated"),
    "session_secret": ("SECRET", "the key sealing the dashboard's session cookie (default: random at start)"),
}


def _flag(name: str) -> str:
    return "--" + ("oidc-leeway" if name == "leeway_seconds" else f"oidc-{name.replace('_', '-')}").replace(
        "oidc-session-secret", "session-secret"
    )


def add_oidc_options(command: argparse.ArgumentParser) -> None:
    """Add the ``--oidc-*`` options (and ``--session-secret``) to ``command``."""
    group = command.add_argument_group("sign-in through an OpenID Connect provider")
    for name, (metavar, text) in _OPTIONS.items():
        group.add_argument(_flag(name), dest=f"oidc_{name}", metavar=metavar, help=f"{text} (${ENVIRONMENT[name]})")


def oidc_settings(args: argparse.Namespace) -> OidcSettings | None:
    """The provider the options and the environment name (``None`` without an issuer); a bad setting is a one-line
    CLI error, before anything starts."""
    values = {name: os.environ[variable] for name, variable in ENVIRONMENT.items() if os.environ.get(variable)}
    values.update({name: value for name in _OPTIONS if (value := getattr(args, f"oidc_{name}", None))})
    if "issuer" not in values:
        extra = sorted(_flag(name) for name in values if name not in ("session_secret",))
        if extra:
            raise CliError(f"{', '.join(extra)} need(s) --oidc-issuer (or ${ENVIRONMENT['issuer']})", exit_code=2)
        return None
    try:
        return OidcSettings.from_values(values)
    except ConfigurationError as error:
        raise CliError(error.message, exit_code=2) from None
