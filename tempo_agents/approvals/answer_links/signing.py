"""Signing and checking answer links.

A link's token is ``v1.<claims>.<signature>``: the claims are compact JSON (base64url) naming the run, the call, its
round, the SHA-256 of the call's arguments as canonical JSON, the answer (action and data), the principal the link
was made for, when it expires and a nonce; the signature is HMAC-SHA256 of ``v1.<claims>`` under the first secret.
Any of the secrets verifies (so a secret is rotated by putting the new one first and dropping the old one once its
links have expired). The token holds no secret; whoever has the link can give that one answer, once, until it
expires, and only while the call waits in that round with those arguments for someone the principal may answer for.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets as random_tokens
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from tempo_agents.approvals.answer_links.choices import Choice, call_choices

__all__ = ["DEFAULT_EXPIRES_IN", "DEFAULT_PRINCIPAL", "AnswerLinks", "LinkClaims", "LinkRefusedError", "args_hash"]

DEFAULT_EXPIRES_IN = timedelta(days=7)
DEFAULT_PRINCIPAL = "answer-link"
"""Who a link of a call assigned to nobody answers as (``AnswerLinks(principal=...)``)."""
_VERSION = "v1"


def args_hash(args: Any) -> str:
    """The SHA-256 (hex) of ``args`` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


class LinkRefusedError(Exception):
    """A link that answers nothing: forged, damaged or expired (``reason`` says which, for the page)."""

    def __init__(self, reason: str, *, status: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class LinkClaims:
    """What a verified link is good for."""

    run_id: str
    tool_call_id: str
    round: int
    args_hash: str
    choice: Choice
    principal: str
    expires_at: float
    nonce: str
    use: str = ""
    """What the token is for: ``""`` a link (a page to open), ``"slack"`` a Slack button's value (answers as whoever
    clicked it, only through the Slack interactions route)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class AnswerLinks:
    """Makes and checks answer links. ``secrets``: the signing secrets, the first signs (rotate by putting a new
    one first); ``base_url``: where the HTTP server is reached (``https://agents.example.com``); ``prefix``: its API
    prefix; ``expires_in``: how long a link answers; ``principal``: who the links of a call assigned to nobody
    answer as (an assigned call's links answer as its first approver)."""

    def __init__(
        self,
        secrets: Sequence[str],
        *,
        base_url: str,
        prefix: str = "/api",
        expires_in: timedelta = DEFAULT_EXPIRES_IN,
        principal: str = DEFAULT_PRINCIPAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        keys = [secret.encode() for secret in secrets if secret]
        if not keys:
            raise ValueError("AnswerLinks needs at least one non-empty secret")
        self._keys = keys
        self.base_url = base_url.rstrip("/")
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.expires_in = expires_in
        self.principal = principal
        self._clock = clock

    def __repr__(self) -> str:  # never shows the secrets
        return f"AnswerLinks(base_url={self.base_url!r}, secrets={len(self._keys)})"

    # Making links -----------------------------------------------------------------------------

    def links(
        self,
        *,
        run_id: str,
        tool_call_id: str,
        round: int,
        args: Any,
        choices: Sequence[Choice],
        principal: str,
    ) -> dict[str, Any]:
        """``{"dashboard": url, "answers": {choice name: url}}`` for one round of one waiting call, each answer URL
        usable by ``principal`` (recorded as ``answeredBy``)."""
        return {
            "dashboard": self.dashboard_url(run_id),
            "answers": {
                choice.name: self.url(
                    self.sign(
                        run_id=run_id,
                        tool_call_id=tool_call_id,
                        round=round,
                        args=args,
                        choice=choice,
                        principal=principal,
                    )
                )
                for choice in choices
            },
        }

    def __call__(
        self,
        run_id: str,
        tool_call_id: str,
        round: int,
        args: Any,
        *,
        kind: str = "approval",
        options: Sequence[str | Mapping[str, Any]] = (),
        approvers: Sequence[str] = (),
    ) -> dict[str, str]:
        """The answer URLs of a waiting call (choice name → URL), as a notification's link maker asks for them: an
        approval's ``approve``/``decline``, a choice question's options; each answers as the call's first approver
        that is a person, else (a call assigned to nobody) as ``principal``. A call assigned to groups only gets
        links that need sign-in (the run's page in the dashboard): a link never answers as a whole group; its
        members get links of their own (:meth:`answers_for`)."""
        choices = call_choices(kind, options)
        people = [name for name in approvers if not name.startswith("group:")]
        if approvers and not people:
            return self.dashboard_answers(self.dashboard_url(run_id), choices)
        principal = (people or [self.principal])[0]
        return self.answers_for(
            run_id=run_id, tool_call_id=tool_call_id, round=round, args=args, choices=choices, principal=principal
        )

    def answers_for(
        self, *, run_id: str, tool_call_id: str, round: int, args: Any, choices: Sequence[Choice], principal: str
    ) -> dict[str, str]:
        """One person's answer URLs of one round of one call (choice name → URL): each answers as ``principal``,
        whoever opens it (a forwarded link still answers as the person it was made for, and says so)."""
        made = self.links(
            run_id=run_id, tool_call_id=tool_call_id, round=round, args=args, choices=choices, principal=principal
        )
        answers: dict[str, str] = made["answers"]
        return answers

    def button_values(
        self, *, run_id: str, tool_call_id: str, round: int, args: Any, choices: Sequence[Choice]
    ) -> dict[str, str]:
        """The values of a Slack message's answer buttons (choice name → token): signed like a link, naming no
        principal (the interactions route answers as the Slack user who clicked) and refused as a link."""
        return {
            choice.name: self.sign(
                run_id=run_id,
                tool_call_id=tool_call_id,
                round=round,
                args=args,
                choice=choice,
                principal="",
                use="slack",
            )
            for choice in choices
        }

    @staticmethod
    def dashboard_answers(page: str, choices: Sequence[Choice]) -> dict[str, str]:
        """Every choice answered on the dashboard (choice name → ``page``, the run's): where a call whose answers
        need a signed-in person is answered."""
        return {choice.name: page for choice in choices}

    def dashboard_url(self, run_id: str) -> str:
        """The run's page in the dashboard (it shows the waiting call and answers under the signed-in token)."""
        return f"{self.base_url}/#/runs/{quote(run_id, safe='')}"

    def url(self, token: str) -> str:
        """The confirmation page of a token."""
        return f"{self.base_url}{self.prefix}/answer-links/{token}"

    def sign(
        self, *, run_id: str, tool_call_id: str, round: int, args: Any, choice: Choice, principal: str, use: str = ""
    ) -> str:
        """A token for one answer of one round of one call, by ``principal``, expiring after ``expires_in``;
        ``use``: what else than a link it is for (``"slack"``: a button's value)."""
        claims: dict[str, Any] = {
            "r": run_id,
            "c": tool_call_id,
            "n": round,
            "h": args_hash(args),
            "a": choice.action,
            "k": choice.name,
            "d": choice.data,
            "p": principal,
            "e": int(self._clock() + self.expires_in.total_seconds()),
            "j": random_tokens.token_urlsafe(12),
        }
        if use:
            claims["u"] = use
        body = _b64(json.dumps(claims, sort_keys=True, separators=(",", ":")).encode())
        signed = f"{_VERSION}.{body}"
        return f"{signed}.{_b64(self._mac(self._keys[0], signed))}"

    # Checking links ---------------------------------------------------------------------------

    def verify(self, token: str) -> LinkClaims:
        """The claims of a genuine, unexpired token; raises :class:`LinkRefusedError` for any other."""
        version, _, rest = token.partition(".")
        body, _, signature = rest.partition(".")
        if version != _VERSION or not body or not signature:
            raise LinkRefusedError("This link is not a valid answer link.", status=403)
        try:
            offered = _unb64(signature)
        except (binascii.Error, ValueError):
            raise LinkRefusedError("This link is not a valid answer link.", status=403) from None
        signed = f"{version}.{body}"
        matches = [hmac.compare_digest(offered, self._mac(key, signed)) for key in self._keys]
        if not any(matches):
            raise LinkRefusedError("This link is not a valid answer link: its signature does not match.", status=403)
        try:
            claims = json.loads(_unb64(body))
            choice = Choice(str(claims["k"]), claims["a"], claims.get("d"))
            verified = LinkClaims(
                run_id=str(claims["r"]),
                tool_call_id=str(claims["c"]),
                round=int(claims["n"]),
                args_hash=str(claims["h"]),
                choice=choice,
                principal=str(claims["p"]),
                expires_at=float(claims["e"]),
                nonce=str(claims["j"]),
                use=str(claims.get("u", "")),
            )
        except (ValueError, KeyError, TypeError):
            raise LinkRefusedError("This link is not a valid answer link.", status=403) from None
        if choice.action not in ("approve", "decline", "resume"):
            raise LinkRefusedError("This link is not a valid answer link.", status=403)
        if verified.expires_at <= self._clock():
            raise LinkRefusedError("This link has expired: open the run in the dashboard to answer.", status=410)
        return verified

    @staticmethod
    def _mac(key: bytes, signed: str) -> bytes:
        return hmac.new(key, signed.encode(), hashlib.sha256).digest()
