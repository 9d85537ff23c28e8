"""Sealing bytes under a keyring with AES-256-GCM: a random 96-bit nonce, the key id kept beside the ciphertext."""

from __future__ import annotations

import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tempo_agents.encryption.keys import Keyring

__all__ = ["NONCE_BYTES", "Sealed", "TamperedError", "open_sealed", "seal"]

NONCE_BYTES = 12


class TamperedError(Exception):
    """Sealed data failed authentication: it was altered, or sealed with other associated data."""


@dataclass(frozen=True)
class Sealed:
    """What :func:`seal` returns: the id of the key used, and the nonce followed by the ciphertext and tag."""

    key_id: str
    data: bytes


def seal(keyring: Keyring, plaintext: bytes, associated: bytes = b"") -> Sealed:
    """Encrypt ``plaintext`` under the keyring's current key, binding ``associated`` (not stored) to it."""
    key = keyring.current
    nonce = os.urandom(NONCE_BYTES)
    return Sealed(key.id, nonce + AESGCM(key.secret).encrypt(nonce, plaintext, associated))


def open_sealed(keyring: Keyring, sealed: Sealed, associated: bytes = b"") -> bytes:
    """Decrypt what :func:`seal` returned; raises ``UnknownKeyError`` or :class:`TamperedError`."""
    key = keyring.find(sealed.key_id)
    nonce, ciphertext = sealed.data[:NONCE_BYTES], sealed.data[NONCE_BYTES:]
    try:
        return AESGCM(key.secret).decrypt(nonce, ciphertext, associated)
    except InvalidTag:
        raise TamperedError(f"data sealed under key {sealed.key_id!r} failed authentication") from None
