"""An event as people read it: a one-line summary, a Slack-compatible message, an email (plain text and HTML)."""

from __future__ import annotations

import html
import json
from email.message import EmailMessage
from typing import Any

from tempo_agents.notifications.events import NotificationEvent, call_label

__all__ = ["ANSWER_ACTION_PREFIX", "details", "email_message", "slack_message", "summary"]

ANSWER_ACTION_PREFIX = "answer:"
"""The ``action_id`` of an interactive message's answer button, before the choice's name."""

_KIND_TITLES = {"approval": "Approval needed", "question": "Question waiting", "suspension": "Input needed"}


def summary(event: NotificationEvent) -> str:
    """One line that says what happened, for a chat message's text or an email's subject."""
    call = event.call
    where = f"run {event.run_id} ({event.agent_id})"
    if call is not None:
        what = call_label(call)
        if event.type == "call.waiting":
            return f"{_KIND_TITLES[call.kind]}: {what} in {where}"
        if event.type == "call.reminder":
            return f"Reminder {event.reminder}: {_KIND_TITLES[call.kind].lower()}: {what} in {where}"
        if event.type == "call.escalated":
            return f"Escalated to {', '.join(event.escalated_to or [])}: {what} in {where}"
        if event.type == "call.expired":
            return f"Deadline passed: {what} in {where}"
        if event.type == "call.answered" and event.answer is not None:
            by = f" by {event.answer.answered_by}" if event.answer.answered_by else ""
            return f"Answered ({event.answer.action}){by}: {what} in {where}"
    end = event.run
    reason = f" ({end.finish_reason})" if end is not None else ""
    titles = {"run.finished": "Run finished", "run.failed": "Run failed", "run.cancelled": "Run cancelled"}
    return f"{titles.get(event.type, event.type)}{reason}: {where}"


def details(event: NotificationEvent) -> list[tuple[str, str]]:
    """The event's facts as label and text, in reading order."""
    rows: list[tuple[str, str]] = [("Run", event.run_id), ("Agent", event.agent_id)]
    call = event.call
    if call is not None:
        rows.append(("Tool", call.tool_name))
        together = f", {call.position} of {call.calls_together} {call.tool_name} calls made together"
        rows.append(("Call", call.tool_call_id + (together if call.position is not None else "")))
        if call.args is not None:
            rows.append(("Arguments", _json(call.args)))
        if call.suspend_payload is not None:
            rows.append(("Asks", _json(call.suspend_payload)))
        if call.expires_at is not None:
            rows.append(("Deadline", call.expires_at.isoformat()))
        if call.approvers:
            rows.append(("Who may answer", ", ".join(call.approvers)))
    if event.run is not None and event.run.error:
        rows.append(("Error", event.run.error))
    return rows


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _buttons(event: NotificationEvent, answers: dict[str, str] | None = None) -> list[tuple[str, str]]:
    links = event.links
    buttons = [(name.capitalize(), url) for name, url in (links.answers if answers is None else answers).items()]
    if links.dashboard:
        buttons.append(("Open in dashboard", links.dashboard))
    return buttons


def slack_message(event: NotificationEvent, *, interactive: bool = False) -> dict[str, Any]:
    """A Slack message body: ``text`` (notifications, clients without blocks) and ``blocks``: the summary, the
    facts, and a button per answer link and for the dashboard. ``interactive`` (a Slack app's message): the
    answer buttons carry signed values instead of links, and answer as whoever clicks them."""
    text = summary(event)
    facts = "\n".join(f"*{label}:* {_slack_escape(value)[:500]}" for label, value in details(event))
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{_slack_escape(text)}*"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": facts}},
    ]
    elements = _interactive_buttons(event) if interactive else _link_buttons(event)
    if elements:
        blocks.append({"type": "actions", "elements": elements})
    return {"text": text, "blocks": blocks}


def _link_buttons(event: NotificationEvent) -> list[dict[str, Any]]:
    return [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": label},
            "url": url,
            "action_id": f"{event.id}-{n}",
        }
        for n, (label, url) in enumerate(_buttons(event))
    ]


def _interactive_buttons(event: NotificationEvent) -> list[dict[str, Any]]:
    values = event.links.buttons or {}
    elements: list[dict[str, Any]] = [
        {
            "type": "button",
            "text": {"type": "plain_text", "text": name.capitalize()},
            "value": value,
            "action_id": f"{ANSWER_ACTION_PREFIX}{name}",
            **({"style": "primary"} if name == "approve" else {"style": "danger"} if name == "decline" else {}),
        }
        for name, value in values.items()
    ]
    if event.links.dashboard:
        elements.append(
            {
                "type": "button",
                "text": {"type": "plain_text", "text": "Open in dashboard"},
                "url": event.links.dashboard,
                "action_id": "open-dashboard",
            }
        )
    return elements


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def email_message(
    event: NotificationEvent, sender: str, to: list[str], answers: dict[str, str] | None = None
) -> EmailMessage:
    """A multipart email: plain text, and HTML with the same facts and a link per button. ``answers``: the
    recipient's own answer links (default: the event's)."""
    message = EmailMessage()
    message["Subject"] = summary(event)
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Message-ID"] = f"<{event.id}@tempo-agents>"
    rows = details(event)
    buttons = _buttons(event, answers)
    plain = [summary(event), "", *(f"{label}: {value}" for label, value in rows)]
    if buttons:
        plain += ["", *(f"{label}: {url}" for label, url in buttons)]
    message.set_content("\n".join(plain) + "\n")
    table = "".join(
        f"<tr><th align='left'>{html.escape(label)}</th><td><pre>{html.escape(value)}</pre></td></tr>"
        for label, value in rows
    )
    links = "".join(
        f"<p><a href='{html.escape(url, quote=True)}'>{html.escape(label)}</a></p>" for label, url in buttons
    )
    message.add_alternative(
        f"<html><body><h2>{html.escape(summary(event))}</h2><table>{table}</table>{links}</body></html>",
        subtype="html",
    )
    return message
