"""Runs started from outside: signed webhook deliveries, their sources, and the templates that make a message."""

from tempo_agents.ingress.event_memory import EventMemory
from tempo_agents.ingress.events import (
    EventApp,
    EventRun,
    EventTemplate,
    event_secrets_of,
    receive_event,
    receive_source_event,
)
from tempo_agents.ingress.webhook_source_file import load_webhook_sources
from tempo_agents.ingress.webhook_sources import WebhookSource
from tempo_agents.ingress.webhooks import WebhookRefusedError, sign_webhook, verify_webhook

__all__ = [
    "EventApp",
    "EventMemory",
    "EventRun",
    "EventTemplate",
    "WebhookRefusedError",
    "WebhookSource",
    "event_secrets_of",
    "load_webhook_sources",
    "receive_event",
    "receive_source_event",
    "sign_webhook",
    "verify_webhook",
]
