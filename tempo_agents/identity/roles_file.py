"""Roles per principal and tenant for the server's static tokens, read once when the server starts: what
``create_server(roles=...)`` takes, written as inline JSON or in a JSON or TOML file.

JSON: ``{"alice": {"acme": ["operator"], "globex": ["viewer"]}, "ci": {"*": ["admin"]}}``. TOML: a table per
principal, ``[alice]`` then ``acme = ["operator"]``. Each principal's mapping is read as a tokens file's ``roles``
(``"*"`` holds the roles in every tenant).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.identity.role_grants import parse_role_mapping
from tempo_agents.identity.roles import Role

__all__ = ["RoleTable", "load_roles"]

RoleTable = dict[str, dict[str, frozenset[Role]]]
"""Principal → tenant → the roles it holds there."""

_SHAPE = '{"principal": {"tenant": ["viewer" | "approver" | "operator" | "admin"]}}'


def load_roles(source: str) -> RoleTable:
    """The roles ``source`` gives: inline JSON when it starts with ``{``, else the path of a JSON file, or of a TOML
    file when it ends in ``.toml``; a ``ConfigurationError`` naming what is wrong otherwise."""
    if source.lstrip().startswith("{"):
        return _table(_json(source, "the inline roles mapping"), "the inline roles mapping")
    file = Path(source)
    where = f"the roles file {file}"
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot read {where}: {error.strerror or error}") from None
    if file.suffix == ".toml":
        try:
            return _table(tomllib.loads(text), where)
        except tomllib.TOMLDecodeError as error:
            raise ConfigurationError(f"{where} is not valid TOML: {error}") from None
    return _table(_json(text, where), where)


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise ConfigurationError(f"{where} is not valid JSON: {error}") from None


def _table(loaded: Any, where: str) -> RoleTable:
    if not isinstance(loaded, dict):
        raise ConfigurationError(f"{where} must map principals to their roles: {_SHAPE}")
    table: RoleTable = {}
    for name, tenants in loaded.items():
        try:
            roles = parse_role_mapping(tenants, name)
        except ConfigurationError as error:
            raise ConfigurationError(f"{where} must map principals to their roles: {_SHAPE} ({error})") from None
        if not name or "" in roles:
            raise ConfigurationError(f"{where} must map principals to their roles: {_SHAPE} (see {name!r})")
        table[name] = roles
    return table
