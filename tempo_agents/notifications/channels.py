"""Where a run's notifications go: the channels an App (or a worker's config file) names.

Channels are defined once, on the App, with their secrets; agents and tools choose among them by name
(``Agent(notify=[...])``, ``create_tool(notify=[...])``; the App's ``default`` otherwise). Only names travel in
workflow history: the delivery activity looks a channel up in the worker's settings, so no secret is ever in an
event, a payload or the journal. Secrets (and a Slack URL) are left out of the settings' ``repr``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tempo_agents.errors import ConfigurationError

__all__ = ["Channel", "EmailChannel", "NotificationSettings", "SlackChannel", "WebhookChannel"]

EVENT_TYPES = (
    "call.waiting",
    "call.reminder",
    "call.escalated",
    "call.expired",
    "call.answered",
    "run.finished",
    "run.failed",
    "run.cancelled",
)
"""Every event a run sends."""


class _ChannelBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    events: list[str] | None = None
    """The event types this channel gets (``None``: all of them)."""

    @field_validator("events")
    @classmethod
    def _known_events(cls, events: list[str] | None) -> list[str] | None:
        unknown = [e for e in events or [] if e not in EVENT_TYPES]
        if unknown:
            raise ValueError(f"unknown event type(s) {unknown}; known: {', '.join(EVENT_TYPES)}")
        return events

    def wants(self, event_type: str) -> bool:
        return self.events is None or event_type in self.events


class WebhookChannel(_ChannelBase):
    """A JSON ``POST`` of the event, signed per Standard Webhooks with each of ``secrets`` (several: rotation)."""

    type: Literal["webhook"] = "webhook"
    url: str
    secrets: list[str] = Field(default_factory=list, repr=False)


class SlackChannel(_ChannelBase):
    """A Slack message: text, and blocks with buttons to the dashboard and answers.

    Posted to an incoming webhook (``url``: its buttons are answer links), or, with ``bot_token`` and
    ``slack_channel``, by a Slack app through ``chat.postMessage``: its answer buttons are interactive (each
    carries a signed value naming the run, the call, its round and the answer), and a click answers as the Slack
    user who clicked, mapped to a principal by ``users`` (Slack user id → principal) or, failing that, by the
    user's email (``users.info``) through ``emails`` (email → principal). ``signing_secret``: the app's, which
    the server's ``POST /api/slack/interactions`` checks every click against. ``api_url``: Slack's Web API."""

    type: Literal["slack"] = "slack"
    url: str | None = Field(default=None, repr=False)
    """An incoming-webhook URL is itself the credential: never printed, never logged."""
    bot_token: str | None = Field(default=None, repr=False)
    slack_channel: str | None = None
    """The Slack channel (its id) a bot posts to."""
    signing_secret: str | None = Field(default=None, repr=False)
    users: dict[str, str] = Field(default_factory=dict)
    emails: dict[str, str] = Field(default_factory=dict)
    api_url: str = "https://slack.com/api"

    def model_post_init(self, context: object, /) -> None:
        if self.bot_token is None and self.url is None:
            raise ConfigurationError(f'Slack channel "{self.name}" needs an incoming-webhook url or a bot_token')
        if self.bot_token is not None and not self.slack_channel:
            raise ConfigurationError(f'Slack channel "{self.name}" posts with a bot_token: name its slack_channel')

    @property
    def interactive(self) -> bool:
        """Whether it posts through the Slack app, with buttons that answer as whoever clicks."""
        return self.bot_token is not None


class EmailChannel(_ChannelBase):
    """An email (plain text and HTML) sent over SMTP, one message per recipient: each carries answer links of its
    own, answering as the recipient's principal (``principals``: address → principal; else the address)."""

    type: Literal["email"] = "email"
    host: str
    port: int = 25
    sender: str
    to: list[str] = Field(min_length=1)
    username: str | None = None
    password: str | None = Field(default=None, repr=False)
    starttls: bool = False
    use_tls: bool = False
    principals: dict[str, str] = Field(default_factory=dict)

    def principal_of(self, address: str) -> str:
        """Who a recipient answers as."""
        return self.principals.get(address, address)


Channel = Annotated[WebhookChannel | SlackChannel | EmailChannel, Field(discriminator="type")]


class NotificationSettings(BaseModel):
    """The channels of an App and how deliveries are retried.

    ``default``: the channels of agents and tools that name none (``None``: every channel). ``public_url``: where
    people open the dashboard (each event links to ``<public_url>/#/runs/<run id>``). ``retry_for``: how long a
    delivery is retried (backoff from ``first_retry`` doubling up to ``longest_retry_interval``) before it is
    recorded as failed. ``attempt_timeout``: how long one attempt may take in all (connecting, sending, waiting
    for the receiver's answer; any length, the HTTP client's and the mail server's timeouts follow it); an attempt
    still unanswered then gives up and abandons its request (its connection closed), so the receiver gets the event
    from the retry and never once more, late, from the attempt that timed out.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    channels: list[Channel] = Field(default_factory=list)
    default: list[str] | None = None
    public_url: str | None = None
    retry_for: timedelta = timedelta(hours=24)
    first_retry: timedelta = timedelta(seconds=1)
    longest_retry_interval: timedelta = timedelta(minutes=10)
    attempt_timeout: timedelta = timedelta(seconds=30)

    def model_post_init(self, context: object, /) -> None:
        names = [c.name for c in self.channels]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigurationError(f"notification channels share a name: {', '.join(duplicates)}")
        unknown = [n for n in self.default or [] if n not in names]
        if unknown:
            raise ConfigurationError(f"default notification channel(s) {unknown} are not defined")

    def channel(self, name: str) -> Channel:
        for channel in self.channels:
            if channel.name == name:
                return channel
        raise ConfigurationError(f'no notification channel "{name}" is configured on this worker')

    def chosen(self, names: list[str] | None) -> list[str]:
        """The channels a call or run notifies: ``names`` (a tool's or agent's choice) or the default."""
        if names is None:
            names = self.default if self.default is not None else [c.name for c in self.channels]
        for name in names:
            self.channel(name)
        return list(names)
