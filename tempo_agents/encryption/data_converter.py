"""The data converter of an App's runs: pydantic's, with the payload codec and sealed failures when keys are
configured."""

from __future__ import annotations

import dataclasses

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from tempo_agents.encryption.failures import SealedFailureConverter
from tempo_agents.encryption.keys import Keyring, KeyringSource
from tempo_agents.encryption.payload_codec import EncryptionCodec

__all__ = ["encryption_codec", "runs_data_converter"]


def runs_data_converter(keys: Keyring | KeyringSource | None) -> DataConverter:
    """The pydantic data converter, as is without ``keys``; with them, every payload sealed by an
    :class:`EncryptionCodec` and failures' messages sealed too (:class:`SealedFailureConverter`)."""
    if keys is None:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter, payload_codec=EncryptionCodec(keys), failure_converter_class=SealedFailureConverter
    )


def encryption_codec(converter: DataConverter) -> EncryptionCodec | None:
    """The encryption codec of ``converter``, or ``None`` when it encrypts nothing."""
    codec = converter.payload_codec
    return codec if isinstance(codec, EncryptionCodec) else None
