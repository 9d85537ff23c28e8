"""The delivery activity: one event to one channel, one attempt per call (Temporal retries it with backoff).

The channel is looked up by name in the worker's settings, where its secrets are; the event carries none. Each
attempt is counted (``tempo_agents_notification_deliveries``) and logged without secrets or bodies.
"""

from __future__ import annotations

import asyncio
import json
import logging
import smtplib
import ssl
import time
import weakref
from collections.abc import Callable

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from tempo_agents.errors import ConfigurationError
from tempo_agents.notifications.channels import (
    EmailChannel,
    NotificationSettings,
    SlackChannel,
    WebhookChannel,
)
from tempo_agents.notifications.delivery_payloads import DELIVER_NOTIFICATION, DeliveryInput, DeliveryOutcome
from tempo_agents.notifications.events import NotificationEvent
from tempo_agents.notifications.messages import email_message, slack_message
from tempo_agents.notifications.signature import signature_header
from tempo_agents.telemetry.metrics import NOTIFICATION_DELIVERIES

logger = logging.getLogger("tempo_agents.notifications")

CHANNEL_MISSING = "ChannelMissing"


class NotificationDeliveries:
    """The delivery activity, bound to a worker's notification settings."""

    def __init__(self, settings: NotificationSettings, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings
        self._clock = clock
        _hide_secret_urls(settings)

    @activity.defn(name=DELIVER_NOTIFICATION)
    async def deliver(self, delivery: DeliveryInput) -> DeliveryOutcome:
        attempt = activity.info().attempt
        try:
            channel = self._settings.channel(delivery.channel)
        except ConfigurationError as error:
            raise ApplicationError(str(error), type=CHANNEL_MISSING, non_retryable=True) from None
        event = delivery.event
        try:
            if isinstance(channel, WebhookChannel):
                status = await self._webhook(channel, event)
            elif isinstance(channel, SlackChannel):
                body = json.dumps(slack_message(event), ensure_ascii=False).encode()
                status = await _post(channel.url, body)
            else:
                status = await _email(channel, event)
        except _DeliveryRefused as refused:
            NOTIFICATION_DELIVERIES.labels(channel.name, event.type, "failed-attempt").inc()
            logger.warning(
                "notification %s (%s) to %s: attempt %d failed: %s",
                event.id,
                event.type,
                channel.name,
                attempt,
                refused,
            )
            raise ApplicationError(f"attempt {attempt}: {refused}", type="DeliveryFailed") from None
        NOTIFICATION_DELIVERIES.labels(channel.name, event.type, "delivered").inc()
        logger.info("notification %s (%s) delivered to %s on attempt %d", event.id, event.type, channel.name, attempt)
        return DeliveryOutcome(attempt=attempt, status_code=status)

    async def _webhook(self, channel: WebhookChannel, event: NotificationEvent) -> int:
        body = event.model_dump_json(by_alias=True, exclude_none=True).encode()
        timestamp = int(self._clock())
        headers = {"content-type": "application/json", "webhook-id": event.id, "webhook-timestamp": str(timestamp)}
        secrets = [secret for secret in channel.secrets]
        if secrets:
            headers["webhook-signature"] = signature_header(secrets, event.id, timestamp, body)
        return await _post(channel.url, body, headers)


class _DeliveryRefused(Exception):
    """An attempt that did not go through (the reason names no secret)."""


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()
"""One pooled client per event loop: a client's TLS context costs tens of milliseconds to build, and deliveries to
one receiver reuse its connections."""


def _client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = httpx.AsyncClient(timeout=httpx.Timeout(20.0))
    return client


async def _post(url: str, body: bytes, headers: dict[str, str] | None = None) -> int:
    try:
        response = await _client().post(url, content=body, headers=headers or {"content-type": "application/json"})
    except httpx.HTTPError as error:
        raise _DeliveryRefused(f"{type(error).__name__}: the receiver could not be reached") from None
    if not 200 <= response.status_code < 300:
        raise _DeliveryRefused(f"the receiver answered {response.status_code}")
    return response.status_code


async def _email(channel: EmailChannel, event: NotificationEvent) -> int:
    message = email_message(event, channel.sender, channel.to)

    def send() -> None:
        smtp_class = smtplib.SMTP_SSL if channel.use_tls else smtplib.SMTP
        with smtp_class(channel.host, channel.port, timeout=20) as smtp:
            if channel.starttls:
                smtp.starttls(context=ssl.create_default_context())
            if channel.username is not None and channel.password is not None:
                smtp.login(channel.username, channel.password)
            smtp.send_message(message)

    try:
        await asyncio.to_thread(send)
    except (OSError, smtplib.SMTPException) as error:
        raise _DeliveryRefused(f"{type(error).__name__}: the mail server did not take the message") from None
    return 250


class _SecretUrlFilter(logging.Filter):
    """Drops log records that would print a URL that is itself a credential (a Slack incoming webhook's):
    ``httpx`` logs every request's URL."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not any(url in text for url in self.urls)


_SECRET_URLS = _SecretUrlFilter()


def _hide_secret_urls(settings: NotificationSettings) -> None:
    urls = {c.url for c in settings.channels if isinstance(c, SlackChannel)}
    if urls:
        _SECRET_URLS.urls |= urls
        for name in ("httpx", "httpcore"):
            if _SECRET_URLS not in logging.getLogger(name).filters:
                logging.getLogger(name).addFilter(_SECRET_URLS)
