"""A webhook delivery as another system sends it: a JSON body and its Standard Webhooks headers, signed with a secret
(for the event routes' tests)."""

from __future__ import annotations

import json
import time
from typing import Any

from tempo_agents import sign_webhook


def signed_delivery(
    payload: Any, *, webhook_id: str, secret: str, sent: int | None = None
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of ``payload`` delivered as ``webhook_id``, sent at ``sent`` (seconds; default: now)."""
    body = json.dumps(payload).encode()
    timestamp = int(time.time()) if sent is None else sent
    return body, {
        "content-type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign_webhook(secret, webhook_id, timestamp, body),
    }
