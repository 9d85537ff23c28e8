"""A tokens file: static bearer tokens and the principals they stand for, read once when the server starts.

Two forms. JSON: ``{"token": "alice"}`` or ``{"token": {"name": "alice", "groups": ["finance"], "roles":
{"acme": ["operator"], "*": ["viewer"]}}}``. Lines: ``token name`` or ``token name group,group`` (blank lines and
``#`` comments skipped). A token without ``roles`` is an admin in every tenant, unless the server is given roles
for its principals (``roles=``): then it holds those (none when its principal is not named).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from tempo_agents.errors import ConfigurationError
from tempo_agents.identity.principal import Principal
from tempo_agents.identity.role_grants import parse_role_mapping
from tempo_agents.identity.roles import Role

__all__ = ["load_token_principals"]

_SHAPES = (
    '{"token": "name"} or {"token": {"name": "name", "groups": ["group"], '
    '"roles": {"tenant": ["viewer" | "approver" | "operator" | "admin"]}}}'
)


RoleMap = Mapping[str, Mapping[str, frozenset[Role]]]
"""Principal → tenant → roles: the roles of the principals whose tokens give none."""


def load_token_principals(path: str | Path, roles: RoleMap | None = None) -> dict[str, Principal]:
    """Token → the principal it stands for, from the tokens file at ``path``; ``roles``: those of the principals
    whose entries give none (module docstring)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot read the tokens file {file}: {error.strerror or error}") from None
    tokens = _json_tokens(file, text, roles) if text.lstrip().startswith("{") else _line_tokens(file, text, roles)
    if not tokens:
        raise ConfigurationError(f"the tokens file {file} holds no tokens")
    return tokens


def _holder(name: str, groups: list[str], roles: RoleMap | None) -> Principal:
    """The principal of a token whose entry gives no roles."""
    if roles is None:
        return Principal.administrator(name, groups)
    return Principal(name=name, groups=tuple(groups), roles=dict(roles.get(name, {})))


def _json_tokens(file: Path, text: str, roles: RoleMap | None) -> dict[str, Principal]:
    try:
        loaded = json.loads(text)
    except ValueError as error:
        raise ConfigurationError(f"the tokens file {file} is not valid JSON: {error}") from None
    tokens: dict[str, Principal] = {}
    for token, value in loaded.items():
        entry = _json_entry(value, roles)
        if not token or entry is None:
            raise ConfigurationError(f"the tokens file {file} must map tokens to names: {_SHAPES}")
        tokens[token] = entry
    return tokens


def _line_tokens(file: Path, text: str, roles: RoleMap | None) -> dict[str, Principal]:
    tokens: dict[str, Principal] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (2, 3):
            raise ConfigurationError(f"{file}:{number}: expected 'token name' or 'token name group,group'")
        groups = [group for group in parts[2].split(",") if group] if len(parts) == 3 else []
        tokens[parts[0]] = _holder(parts[1], groups, roles)
    return tokens


def _json_entry(value: object, roles: RoleMap | None) -> Principal | None:
    """A JSON tokens file's value as a principal; ``None`` when malformed."""
    if isinstance(value, str) and value:
        return _holder(value, [], roles)
    if not isinstance(value, dict) or set(value) - {"name", "groups", "roles"}:
        return None
    name, groups = value.get("name"), value.get("groups", [])
    if not isinstance(name, str) or not name or not isinstance(groups, list):
        return None
    if not all(isinstance(group, str) and group for group in groups):
        return None
    if "roles" not in value:
        return _holder(name, groups, roles)
    try:
        given = parse_role_mapping(value["roles"], name)
    except ConfigurationError:
        return None
    return Principal(name=name, groups=tuple(groups), roles=given) if "" not in given else None
