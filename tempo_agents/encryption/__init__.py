"""Encryption: keyrings that rotate without downtime, AES-256-GCM sealing under them, and the Temporal payload codec
that seals what runs send through Temporal."""

from tempo_agents.encryption.data_converter import encryption_codec, runs_data_converter
from tempo_agents.encryption.failures import SealedFailureConverter, names_missing_key
from tempo_agents.encryption.keys import (
    KEYS_ENVIRONMENT_VARIABLE,
    EncryptionKey,
    Keyring,
    KeyringSource,
    UnknownKeyError,
    configured_keys,
    current_keyring,
    keyring_from_environment,
    keyring_from_file,
    keyring_of,
    parse_keys,
)
from tempo_agents.encryption.payload_codec import ENCRYPTED_ENCODING, KEY_ID_METADATA, EncryptionCodec, is_encrypted
from tempo_agents.encryption.sealing import Sealed, TamperedError, open_sealed, seal

__all__ = [
    "ENCRYPTED_ENCODING",
    "KEYS_ENVIRONMENT_VARIABLE",
    "KEY_ID_METADATA",
    "EncryptionCodec",
    "EncryptionKey",
    "Keyring",
    "KeyringSource",
    "Sealed",
    "SealedFailureConverter",
    "TamperedError",
    "UnknownKeyError",
    "configured_keys",
    "current_keyring",
    "encryption_codec",
    "is_encrypted",
    "keyring_from_environment",
    "keyring_from_file",
    "keyring_of",
    "names_missing_key",
    "open_sealed",
    "parse_keys",
    "runs_data_converter",
    "seal",
]
