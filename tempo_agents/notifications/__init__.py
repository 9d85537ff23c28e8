"""Notifications: a run's events (a call waits, a reminder, an escalation, a deadline passed, an answer, the run's
end) delivered durably to webhooks, Slack-compatible incoming webhooks and email (ARCHITECTURE.md,
"Notifications").

Light on purpose: importing this package imports its settings and signatures only.
"""

from tempo_agents.notifications.channels import EmailChannel, NotificationSettings, SlackChannel, WebhookChannel
from tempo_agents.notifications.config_file import NOTIFICATIONS_ENV, load_notification_settings
from tempo_agents.notifications.delivery_activity import NotificationDeliveries
from tempo_agents.notifications.delivery_payloads import (
    DELIVERIES_QUERY,
    NOTIFICATION_DELIVERY_WORKFLOW,
    DeliveryRecord,
    delivery_workflow_id,
)
from tempo_agents.notifications.delivery_workflow import NotificationDeliveryWorkflow
from tempo_agents.notifications.events import (
    AnswerLinkMaker,
    AnswerView,
    CallKind,
    CallView,
    EventType,
    LinkedCall,
    NotificationEvent,
    RunEnd,
    event_id,
)
from tempo_agents.notifications.messages import ANSWER_ACTION_PREFIX
from tempo_agents.notifications.sender import NotificationSender
from tempo_agents.notifications.signature import sign_webhook, signature_header
from tempo_agents.notifications.slack_requests import (
    SLACK_TOLERANCE_SECONDS,
    SlackRequestRefusedError,
    sign_slack_request,
    verify_slack_request,
)
from tempo_agents.notifications.slack_users import slack_principal

__all__ = [
    "ANSWER_ACTION_PREFIX",
    "DELIVERIES_QUERY",
    "NOTIFICATIONS_ENV",
    "NOTIFICATION_DELIVERY_WORKFLOW",
    "SLACK_TOLERANCE_SECONDS",
    "AnswerLinkMaker",
    "AnswerView",
    "CallKind",
    "CallView",
    "DeliveryRecord",
    "EmailChannel",
    "EventType",
    "LinkedCall",
    "NotificationDeliveries",
    "NotificationDeliveryWorkflow",
    "NotificationEvent",
    "NotificationSender",
    "NotificationSettings",
    "RunEnd",
    "SlackChannel",
    "SlackRequestRefusedError",
    "WebhookChannel",
    "delivery_workflow_id",
    "event_id",
    "load_notification_settings",
    "sign_slack_request",
    "sign_webhook",
    "signature_header",
    "slack_principal",
    "verify_slack_request",
]
