"""Failures under encryption: their messages and stack traces sealed like any payload, except a missing key's.

A failure's message and stack trace can quote what a run carries (a tool's error text, an argument), so with
encryption on they move into the failure's encoded attributes, which the payload codec seals; Temporal shows
"Encoded failure" to whoever reads the history without the codec. One failure stays in clear: a payload that
cannot be opened because its key is no longer configured. Its message names only the key id, and it must be
readable where an operator looks first (the worker's log, the workflow task's failure in the history) by someone
who cannot decode anything.
"""

from __future__ import annotations

from temporalio.api.failure.v1 import Failure
from temporalio.converter import DefaultFailureConverter, PayloadConverter

from tempo_agents.encryption.keys import UnknownKeyError

__all__ = ["SealedFailureConverter", "names_missing_key"]

_IN_CLEAR = DefaultFailureConverter()


def names_missing_key(error: BaseException | None) -> bool:
    """Whether ``error``, or an error it was raised from, is an :class:`UnknownKeyError`."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, UnknownKeyError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


class SealedFailureConverter(DefaultFailureConverter):
    """The default failure converter with its messages and stack traces encoded (sealed by the codec), but for
    failures caused by a missing key, whose messages stay in clear."""

    def __init__(self) -> None:
        super().__init__(encode_common_attributes=True)

    def to_failure(self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure) -> None:
        """``exception`` as a failure: sealed, unless a missing key caused it."""
        if names_missing_key(exception):
            _IN_CLEAR.to_failure(exception, payload_converter, failure)
            return
        super().to_failure(exception, payload_converter, failure)
