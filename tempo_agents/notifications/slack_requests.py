"""Slack's request signatures: ``X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">`` under
the Slack app's signing secret, with ``X-Slack-Request-Timestamp`` within five minutes of now.

A request that passes is genuine and recent; that it was not seen before is the caller's to check (the server
keeps every accepted signature in the store, and a signature is only good inside the window anyway).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping

__all__ = ["SLACK_TOLERANCE_SECONDS", "SlackRequestRefusedError", "sign_slack_request", "verify_slack_request"]

SLACK_TOLERANCE_SECONDS = 300
"""How far a request's timestamp may be from now."""


class SlackRequestRefusedError(Exception):
    """A request that is not Slack's, or not recent (the reason names no secret; ``code`` names the refusal for the
    audit trail: ``SLACK_UNSIGNED``, ``SLACK_STALE`` or ``SLACK_FORGED``)."""

    def __init__(self, reason: str, code: str) -> None:
        super().__init__(reason)
        self.code = code


def sign_slack_request(signing_secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Slack-Signature`` Slack puts on ``body`` sent at ``timestamp``."""
    base = f"v0:{timestamp}:".encode() + body
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


def verify_slack_request(
    signing_secrets: Iterable[str], headers: Mapping[str, str], body: bytes, *, now: float
) -> tuple[str, str]:
    """The secret of ``signing_secrets`` that signed the request within the window, and the request's signature;
    raises :class:`SlackRequestRefusedError` otherwise. ``headers``: lower-case names."""
    stamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    if not stamp.isdigit() or not signature.startswith("v0="):
        raise SlackRequestRefusedError("the request carries no Slack signature", "SLACK_UNSIGNED")
    timestamp = int(stamp)
    if abs(now - timestamp) > SLACK_TOLERANCE_SECONDS:
        raise SlackRequestRefusedError("the request's timestamp is too old or too far ahead", "SLACK_STALE")
    for secret in signing_secrets:
        if hmac.compare_digest(signature, sign_slack_request(secret, timestamp, body)):
            return secret, signature
    raise SlackRequestRefusedError("the request's Slack signature does not match", "SLACK_FORGED")
