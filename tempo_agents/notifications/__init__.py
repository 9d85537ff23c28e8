"""Notifications: a run's events (a call waits, a reminder, an escalation, a deadline passed, an answer, the run's
end) delivered durably to webhooks, Slack-compatible incoming webhooks and email (ARCHITECTURE.md,
"Notifications").

Light on purpose: importing this package imports its settings and signatures only.
"""

from tempo_agents.notifications.channels import EmailChannel, NotificationSettings, SlackChannel, WebhookChannel
from tempo_agents.notifications.signature import sign_webhook, signature_header

__all__ = [
    "EmailChannel",
    "NotificationSettings",
    "SlackChannel",
    "WebhookChannel",
    "sign_webhook",
    "signature_header",
]
