"""Encryption keys: a keyring whose first key encrypts and whose every key decrypts, so keys rotate without downtime.

A keyring comes from the environment (``TEMPO_AGENTS_ENCRYPTION_KEYS="k2:<base64>,k1:<base64>"``), from a
JSON file (``{"keys": [{"id": "k2", "key": "<base64>"}, ...]}``) or from a callable the App is given (for a
KMS). Each key is 32 bytes (AES-256); its id travels with everything it encrypts, in clear.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tempo_agents.errors import ConfigurationError

__all__ = [
    "KEYS_ENVIRONMENT_VARIABLE",
    "EncryptionKey",
    "Keyring",
    "KeyringSource",
    "UnknownKeyError",
    "configured_keys",
    "current_keyring",
    "keyring_from_environment",
    "keyring_from_file",
    "keyring_of",
    "parse_keys",
]

KEYS_ENVIRONMENT_VARIABLE = "TEMPO_AGENTS_ENCRYPTION_KEYS"
KEY_BYTES = 32
_KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

KeyringSource = Callable[[], "Keyring"]
"""A callable that returns the current keyring (for keys held by a KMS)."""


class UnknownKeyError(Exception):
    """Data was encrypted under a key the keyring no longer holds."""

    def __init__(self, key_id: str) -> None:
        super().__init__(
            f"data is encrypted under key {key_id!r}, which is not among the configured encryption keys; "
            f"add it back to {KEYS_ENVIRONMENT_VARIABLE} (or the keys file) to read it"
        )
        self.key_id = key_id


@dataclass(frozen=True, repr=False)
class EncryptionKey:
    """One AES-256 key and the id stored beside what it encrypts."""

    id: str
    secret: bytes

    def __post_init__(self) -> None:
        if not _KEY_ID.match(self.id):
            raise ConfigurationError(
                f"an encryption key id must be 1-64 letters, digits, '.', '_' or '-', not {self.id!r}"
            )
        if len(self.secret) != KEY_BYTES:
            raise ConfigurationError(
                f"encryption key {self.id!r} is {len(self.secret)} bytes; AES-256 needs {KEY_BYTES}"
            )

    def __repr__(self) -> str:  # never print the secret
        return f"EncryptionKey(id={self.id!r})"


@dataclass(frozen=True)
class Keyring:
    """Keys in order of preference: the first encrypts, all decrypt."""

    keys: tuple[EncryptionKey, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ConfigurationError("a keyring needs at least one encryption key")
        ids = [key.id for key in self.keys]
        if len(set(ids)) != len(ids):
            raise ConfigurationError(f"encryption key ids must be unique: {ids}")

    @property
    def current(self) -> EncryptionKey:
        """The key new data is encrypted under."""
        return self.keys[0]

    def find(self, key_id: str) -> EncryptionKey:
        """The key with ``key_id``; raises :class:`UnknownKeyError` (naming the id) when it is not configured."""
        for key in self.keys:
            if key.id == key_id:
                return key
        raise UnknownKeyError(key_id)


def parse_keys(text: str) -> Keyring:
    """A keyring from ``"id:<base64>,id:<base64>"`` (the environment variable's form)."""
    keys: list[EncryptionKey] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        key_id, sep, encoded = part.partition(":")
        if not sep:
            raise ConfigurationError(f"an encryption key must be written 'id:<base64 of 32 bytes>', not {part[:8]!r}…")
        keys.append(EncryptionKey(key_id.strip(), _decode(key_id.strip(), encoded.strip())))
    return Keyring(tuple(keys))


def keyring_from_environment(environ: Mapping[str, str] | None = None) -> Keyring | None:
    """The keyring in ``TEMPO_AGENTS_ENCRYPTION_KEYS``, or ``None`` when it is unset or empty."""
    text = (os.environ if environ is None else environ).get(KEYS_ENVIRONMENT_VARIABLE, "").strip()
    return parse_keys(text) if text else None


def configured_keys(keys: Keyring | KeyringSource | None) -> Keyring | KeyringSource | None:
    """``keys`` when given, else the keyring of ``TEMPO_AGENTS_ENCRYPTION_KEYS`` (``None`` when that is unset)."""
    return keys if keys is not None else keyring_from_environment()


def current_keyring(keys: Keyring | KeyringSource) -> Keyring:
    """The keyring in force now: ``keys``, or a key source's answer now (ask once per batch of values)."""
    return keys if isinstance(keys, Keyring) else keys()


def keyring_from_file(path: str | Path) -> Keyring:
    """A keyring from a JSON file: ``{"keys": [{"id": "k2", "key": "<base64>"}, ...]}``, newest first."""
    file = Path(path)
    try:
        loaded = json.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigurationError(f"cannot read the keys file {file}: {error.strerror or error}") from None
    except ValueError as error:
        raise ConfigurationError(f"the keys file {file} is not valid JSON: {error}") from None
    entries = loaded.get("keys") if isinstance(loaded, dict) else None
    if not isinstance(entries, list) or not all(_is_entry(entry) for entry in entries):
        raise ConfigurationError(f'the keys file {file} must hold {{"keys": [{{"id": "...", "key": "<base64>"}}]}}')
    return Keyring(tuple(EncryptionKey(entry["id"], _decode(entry["id"], entry["key"])) for entry in entries))


def _is_entry(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"id", "key"}
        and all(isinstance(value, str) for value in entry.values())
    )


def _decode(key_id: str, encoded: str) -> bytes:
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigurationError(f"encryption key {key_id!r} is not valid base64") from None


def keyring_of(keys: Sequence[EncryptionKey]) -> Keyring:
    """A keyring of ``keys`` (newest first)."""
    return Keyring(tuple(keys))
