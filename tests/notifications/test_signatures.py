"""The signature a receiver checks: every secret of a rotation signs, and a forged, tampered, expired or future
delivery is refused by the verifier the notifications guide shows
(``tempo_agents.ingress.webhooks.verify_webhook``); the openssl recipe of the guide computes the same signature."""

from __future__ import annotations

import base64
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tempo_agents.ingress.webhooks import WebhookRefusedError, verify_webhook
from tempo_agents.notifications import sign_webhook, signature_header

SECRET = "whsec_" + base64.b64encode(b"a key of thirty-two bytes, long!").decode()
NEXT = "whsec_" + base64.b64encode(b"the next key, after the rotation").decode()
BODY = b'{"id":"evt_1","type":"call.waiting"}'
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
STAMP = int(NOW.timestamp())


def headers(signature: str, stamp: int = STAMP, webhook_id: str = "evt_1") -> dict[str, str]:
    return {"webhook-id": webhook_id, "webhook-timestamp": str(stamp), "webhook-signature": signature}


def test_each_secret_of_a_rotation_signs_and_either_verifies() -> None:
    header = signature_header([SECRET, NEXT], "evt_1", STAMP, BODY)
    assert header.split(" ") == [sign_webhook(SECRET, "evt_1", STAMP, BODY), sign_webhook(NEXT, "evt_1", STAMP, BODY)]
    assert verify_webhook([SECRET], headers(header), BODY, now=NOW).webhook_id == "evt_1"
    assert verify_webhook([NEXT], headers(header), BODY, now=NOW).webhook_id == "evt_1"


@pytest.mark.parametrize(
    ("case", "status"),
    [("forged", 401), ("tampered body", 401), ("other id", 401), ("expired", 400), ("future", 400), ("missing", 400)],
)
def test_a_delivery_that_does_not_hold_is_refused(case: str, status: int) -> None:
    good = signature_header([SECRET], "evt_1", STAMP, BODY)
    body, sent = BODY, headers(good)
    if case == "forged":
        sent = headers(sign_webhook("whsec_" + base64.b64encode(b"not the secret").decode(), "evt_1", STAMP, BODY))
    elif case == "tampered body":
        body = BODY.replace(b"waiting", b"answered")
    elif case == "other id":
        sent = headers(good, webhook_id="evt_2")
    elif case == "expired":  # a captured delivery sent again later
        old = STAMP - 3600
        sent = headers(signature_header([SECRET], "evt_1", old, BODY), stamp=old)
    elif case == "future":
        later = STAMP + 3600
        sent = headers(signature_header([SECRET], "evt_1", later, BODY), stamp=later)
    else:
        sent = {"webhook-id": "evt_1", "webhook-timestamp": str(STAMP)}
    with pytest.raises(WebhookRefusedError) as refused:
        verify_webhook([SECRET], sent, body, now=NOW, tolerance=timedelta(minutes=5))
    assert refused.value.status == status


def test_the_openssl_recipe_computes_the_same_signature() -> None:
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is installed by scripts/_system_packages.sh"
    key_hex = base64.b64decode(SECRET.removeprefix("whsec_")).hex()
    signed = f"evt_1.{STAMP}.".encode() + BODY
    digest = subprocess.run(
        [openssl, "dgst", "-sha256", "-mac", "HMAC", "-macopt", f"hexkey:{key_hex}", "-binary"],
        input=signed,
        capture_output=True,
        check=True,
    ).stdout
    assert "v1," + base64.b64encode(digest).decode() == sign_webhook(SECRET, "evt_1", STAMP, BODY)


def test_the_guides_shell_recipe_tells_verified_from_forged(tmp_path: Path) -> None:
    guide = (Path(__file__).parents[2] / "docs" / "how-to" / "notifications.md").read_text()
    section = guide[guide.index("With curl and openssl") :]
    script = section[section.index("```sh\n") + 6 : section.index("```", section.index("```sh\n") + 6)]
    (tmp_path / "body.json").write_bytes(BODY)
    good = signature_header([NEXT, SECRET], "evt_1", STAMP, BODY)
    forged = sign_webhook("whsec_" + base64.b64encode(b"someone else").decode(), "evt_1", STAMP, BODY)
    outputs = []
    for signature in (good, forged):
        env = {"PATH": "/usr/bin:/bin", "OPS_SECRET": SECRET, "WEBHOOK_ID": "evt_1"}
        env |= {"WEBHOOK_TIMESTAMP": str(STAMP), "WEBHOOK_SIGNATURE": signature}
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
        outputs.append(done.stdout.strip())
    assert outputs == ["verified", "forged"]
