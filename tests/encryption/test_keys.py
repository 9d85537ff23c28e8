"""Keyrings: the first key seals, every key opens, a missing key is named."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from tempo_agents.encryption import (
    EncryptionKey,
    Keyring,
    TamperedError,
    UnknownKeyError,
    keyring_from_environment,
    keyring_from_file,
    open_sealed,
    parse_keys,
    seal,
)
from tempo_agents.errors import ConfigurationError


def _key(key_id: str) -> EncryptionKey:
    return EncryptionKey(key_id, os.urandom(32))


def test_data_sealed_under_an_old_key_opens_after_rotation() -> None:
    first, second = _key("k1"), _key("k2")
    sealed = seal(Keyring((first,)), b"invoice 4471 for acme")
    assert sealed.key_id == "k1"
    assert b"invoice" not in sealed.data
    rotated = Keyring((second, first))
    assert open_sealed(rotated, sealed) == b"invoice 4471 for acme"
    assert seal(rotated, b"new").key_id == "k2"


def test_a_key_no_longer_configured_is_named() -> None:
    sealed = seal(Keyring((_key("retired-2025"),)), b"x")
    with pytest.raises(UnknownKeyError, match="retired-2025"):
        open_sealed(Keyring((_key("k2"),)), sealed)


def test_altered_data_and_other_associated_data_are_refused() -> None:
    keyring = Keyring((_key("k1"),))
    sealed = seal(keyring, b"secret", b"run-1")
    with pytest.raises(TamperedError):
        open_sealed(keyring, sealed, b"run-2")
    flipped = bytes([sealed.data[0] ^ 1]) + sealed.data[1:]
    with pytest.raises(TamperedError):
        open_sealed(keyring, type(sealed)(sealed.key_id, flipped), b"run-1")


def test_keys_from_the_environment_and_a_file(tmp_path: Path) -> None:
    one, two = base64.b64encode(os.urandom(32)).decode(), base64.b64encode(os.urandom(32)).decode()
    ring = keyring_from_environment({"TEMPO_AGENTS_ENCRYPTION_KEYS": f"k2:{two}, k1:{one}"})
    assert ring is not None and [key.id for key in ring.keys] == ["k2", "k1"]
    assert keyring_from_environment({}) is None
    file = tmp_path / "keys.json"
    file.write_text(json.dumps({"keys": [{"id": "k2", "key": two}]}))
    assert keyring_from_file(file).current.secret == base64.b64decode(two)
    assert "secret" not in repr(ring.current) and two not in repr(ring)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k1:" + base64.b64encode(b"short").decode(), "5 bytes"),
        ("k1:not base64!", "not valid base64"),
        ("justakey", "id:<base64"),
        ("k1:{0},k1:{0}".format(base64.b64encode(bytes(32)).decode()), "unique"),
        ("bad id:" + base64.b64encode(bytes(32)).decode(), "key id"),
        (" , ", "at least one"),
    ],
)
def test_bad_keys_are_refused_with_a_clear_message(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        parse_keys(text)
