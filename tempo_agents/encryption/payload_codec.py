"""The Temporal payload codec: every payload tempo-agents sends through Temporal, sealed under the keyring.

An encrypted payload keeps two metadata entries in clear: ``encoding`` (:data:`ENCRYPTED_ENCODING`, so a reader
knows to decode it) and ``encryption-key-id`` (the key it was sealed under, so rotation needs no guessing). Its
data is the whole original payload (metadata and data), serialized and sealed with AES-256-GCM. A payload without
that encoding (a history recorded before encryption was turned on) passes through decoding unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from tempo_agents.encryption.keys import Keyring, KeyringSource, current_keyring
from tempo_agents.encryption.sealing import Sealed, open_sealed, seal

__all__ = ["ENCRYPTED_ENCODING", "KEY_ID_METADATA", "EncryptionCodec", "is_encrypted"]

ENCRYPTED_ENCODING = b"binary/encrypted"
"""The ``encoding`` metadata of an encrypted payload (the value Temporal's samples and tools use)."""
KEY_ID_METADATA = "encryption-key-id"
"""The metadata entry naming the key a payload was sealed under."""


def is_encrypted(payload: Payload) -> bool:
    """Whether ``payload`` was sealed by an :class:`EncryptionCodec`."""
    return payload.metadata.get("encoding") == ENCRYPTED_ENCODING


class EncryptionCodec(PayloadCodec):
    """Seals payloads under the keyring's current key and opens them under whichever key they name.

    ``keys`` is a :class:`Keyring` or a callable that returns one (asked once per batch of payloads, so a KMS-backed
    source should cache). Opening a payload under a key that is no longer configured raises ``UnknownKeyError``,
    which names the key id.
    """

    def __init__(self, keys: Keyring | KeyringSource) -> None:
        self._keys = keys

    def keyring(self) -> Keyring:
        """The keyring in force now."""
        return current_keyring(self._keys)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each payload sealed whole under the current key."""
        keyring = self.keyring()
        return [_sealed_payload(seal(keyring, payload.SerializeToString())) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Each encrypted payload opened; any other payload as it is."""
        keyring: Keyring | None = None
        decoded: list[Payload] = []
        for payload in payloads:
            if not is_encrypted(payload):
                decoded.append(payload)
                continue
            keyring = keyring or self.keyring()
            key_id = payload.metadata.get(KEY_ID_METADATA, b"").decode("utf-8", "replace")
            decoded.append(Payload.FromString(open_sealed(keyring, Sealed(key_id, payload.data))))
        return decoded


def _sealed_payload(sealed: Sealed) -> Payload:
    return Payload(
        metadata={"encoding": ENCRYPTED_ENCODING, KEY_ID_METADATA: sealed.key_id.encode("ascii")},
        data=sealed.data,
    )
