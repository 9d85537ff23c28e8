"""Who a Slack user is here: the Slack channel's ``users`` map (Slack user id → principal), else the user's email
(Slack's ``users.info``, which needs the ``users:read`` and ``users:read.email`` scopes) through its ``emails``
map (email → principal). A user neither names is nobody: their clicks answer nothing."""

from __future__ import annotations

import httpx

from tempo_agents.notifications.channels import SlackChannel

__all__ = ["slack_principal"]


async def slack_principal(channel: SlackChannel, user_id: str, http: httpx.AsyncClient) -> str | None:
    """The principal of Slack user ``user_id`` for ``channel``, or ``None``."""
    if user_id in channel.users:
        return channel.users[user_id]
    if not channel.emails or channel.bot_token is None:
        return None
    try:
        response = await http.get(
            f"{channel.api_url.rstrip('/')}/users.info",
            params={"user": user_id},
            headers={"authorization": f"Bearer {channel.bot_token}"},
        )
        answer = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(answer, dict) or not answer.get("ok"):
        return None
    profile = (answer.get("user") or {}).get("profile") or {}
    email = profile.get("email")
    return channel.emails.get(email) if isinstance(email, str) else None
