"""Runs started from outside: signed webhook deliveries, their sources, and the templates that make a message."""

from tempo_agents.ingress.event_memory import EventMemory
from tempo_agents.ingress.events import EventRun
from tempo_agents.ingress.webhook_source_file import load_webhook_sources
from tempo_agents.ingress.webhook_sources import WebhookSource
from tempo_agents.ingress.webhooks import WebhookRefusedError, sign_webhook, verify_webhook

__all__ = [
    "EventMemory",
    "EventRun",
    "WebhookRefusedError",
    "WebhookSource",
    "load_webhook_sources",
    "sign_webhook",
    "verify_webhook",
]
