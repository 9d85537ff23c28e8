"""Verifying a webhook delivery signed the Standard Webhooks way (headers ``webhook-id``, ``webhook-timestamp``,
``webhook-signature``).

The signature is ``v1,`` and the base64 of HMAC-SHA256 over ``<id>.<timestamp>.<body>`` with the secret
(``whsec_`` and base64 of the key, or any other text, whose UTF-8 bytes are the key); the header may carry several,
space-separated (a sender rotating its secret), and one match is enough. It is a few lines of the standard library,
so no dependency is added for it; the signing is shared with the notifications a run sends
(``notifications/signature.py``). A delivery whose timestamp is further than ``tolerance`` from now is refused: a
captured delivery cannot be sent again later.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from tempo_agents.errors import TempoAgentsError
from tempo_agents.notifications import sign_webhook

__all__ = ["DEFAULT_TOLERANCE", "WebhookRefusedError", "sign_webhook", "verify_webhook"]

DEFAULT_TOLERANCE = timedelta(minutes=5)
"""How far a delivery's ``webhook-timestamp`` may be from now (either way)."""

_WEBHOOK_ID = re.compile(r"^[A-Za-z0-9._:~-]{1,200}$")


class WebhookRefusedError(TempoAgentsError):
    """A delivery that is not verified: ``status`` 400 (headers missing or malformed, timestamp too old or too new)
    or 401 (no signature matches)."""

    code = "WEBHOOK_REFUSED"

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class VerifiedDelivery:
    """A delivery whose signature matched: the sender's id for it and when it was sent."""

    webhook_id: str
    sent_at: datetime


def verify_webhook(
    secrets: list[str],
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: datetime,
    tolerance: timedelta = DEFAULT_TOLERANCE,
) -> VerifiedDelivery:
    """Check a delivery against any of ``secrets``; raises :class:`WebhookRefusedError` when it does not hold.

    ``headers`` are looked up by lower-case name."""
    webhook_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    missing = [
        name
        for name, value in (
            ("webhook-id", webhook_id),
            ("webhook-timestamp", timestamp),
            ("webhook-signature", signatures),
        )
        if not value
    ]
    if missing or webhook_id is None or timestamp is None or signatures is None:
        raise WebhookRefusedError(400, f"missing webhook header(s): {', '.join(missing)}")
    if not _WEBHOOK_ID.match(webhook_id):
        raise WebhookRefusedError(400, "webhook-id must be 1 to 200 letters, digits or . _ : ~ -")
    if not timestamp.isdigit() or len(timestamp) > 12:
        raise WebhookRefusedError(400, "webhook-timestamp must be whole seconds since 1970")
    sent = int(timestamp)
    age = now.timestamp() - sent
    if age > tolerance.total_seconds():
        raise WebhookRefusedError(400, "webhook-timestamp is too old: the delivery is refused as a replay")
    if -age > tolerance.total_seconds():
        raise WebhookRefusedError(400, "webhook-timestamp is in the future")
    offered = [part.strip() for part in signatures.split(" ") if part.strip()]
    for secret in secrets:
        expected = sign_webhook(secret, webhook_id, sent, body)
        if any(hmac.compare_digest(expected.encode(), candidate.encode()) for candidate in offered):
            return VerifiedDelivery(webhook_id=webhook_id, sent_at=datetime.fromtimestamp(sent, tz=now.tzinfo))
    raise WebhookRefusedError(401, "no webhook-signature matches: the delivery is refused")
