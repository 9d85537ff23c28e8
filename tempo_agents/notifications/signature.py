"""Standard Webhooks signatures: ``v1,`` and the base64 of HMAC-SHA256 over ``<id>.<timestamp>.<body>``.

A secret is ``whsec_`` and the base64 of the key, or any other text, whose UTF-8 bytes are the key. Several
secrets (a secret being rotated) give several signatures, space-separated in one ``webhook-signature`` header;
a receiver accepts the delivery when any one matches. The incoming webhooks of ``ingress/webhooks.py`` are
verified with the same functions, and the outgoing notifications are signed with them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence

__all__ = ["sign_webhook", "signature_header"]


def _key(secret: str) -> bytes:
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
        except binascii.Error:
            pass
    return secret.encode()


def sign_webhook(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The signature a sender holding ``secret`` puts on ``body`` (one entry of ``webhook-signature``)."""
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(secrets: Sequence[str], webhook_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header: one signature per secret, space-separated (rotation)."""
    return " ".join(sign_webhook(secret, webhook_id, timestamp, body) for secret in secrets)
