"""Encryption: keyrings that rotate without downtime, and AES-256-GCM sealing under them."""

from tempo_agents.encryption.keys import (
    KEYS_ENVIRONMENT_VARIABLE,
    EncryptionKey,
    Keyring,
    KeyringSource,
    UnknownKeyError,
    keyring_from_environment,
    keyring_from_file,
    keyring_of,
    parse_keys,
)
from tempo_agents.encryption.sealing import Sealed, TamperedError, open_sealed, seal

__all__ = [
    "KEYS_ENVIRONMENT_VARIABLE",
    "EncryptionKey",
    "Keyring",
    "KeyringSource",
    "Sealed",
    "TamperedError",
    "UnknownKeyError",
    "keyring_from_environment",
    "keyring_from_file",
    "keyring_of",
    "open_sealed",
    "parse_keys",
    "seal",
]
