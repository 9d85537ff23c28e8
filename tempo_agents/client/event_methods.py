"""The App's events: runs started by webhook deliveries, to an agent's route or from a configured source
(ARCHITECTURE.md, "Runs not started by a person").

:class:`EventMethods` is the part of :class:`App` that receives them and configures the sources; verifying a
delivery and starting its run once are ``ingress/``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from tempo_agents.errors import ConfigurationError
from tempo_agents.ingress import EventApp, EventRun, WebhookSource, receive_event, receive_source_event

__all__ = ["EventMethods", "EventSourcesApp"]


class EventSourcesApp(EventApp, Protocol):
    """An App that receives events, with its configured webhook sources by name."""

    webhook_sources: dict[str, WebhookSource]


class EventMethods:
    """The App's event methods (``app.receive_event(...)``, ``app.receive_source_event(...)``) and its webhook
    sources' configuration."""

    async def receive_event(
        self: EventSourcesApp,
        agent_id: str,
        headers: Mapping[str, str],
        body: bytes,
        *,
        template: str | None = None,
        now: datetime | None = None,
        **options: Any,
    ) -> EventRun:
        """Start a run of ``agent_id`` from a webhook delivery signed the Standard Webhooks way (``headers``
        ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``, by lower-case name) with one of the agent's
        ``event_secrets``. The JSON ``body`` is rendered into the message by the event template ``template`` (by
        default the one named like the agent; without one, the JSON text). The same ``webhook-id`` delivered again
        starts nothing and answers the first run (``duplicate=True``). ``options`` are run options; the run's
        thread and resource are the ones the signed body names (``"memory": {"thread": ..., "resource": ...}``),
        which a ``memory`` option may only repeat.

        Raises :class:`WebhookRefusedError` (``status`` 400 or 401) for a forged, too old or malformed delivery or
        one sent to another thread than it names, 422 for a payload the template cannot render."""
        return await receive_event(
            self,
            agent_id,
            {name.lower(): value for name, value in headers.items()},
            body,
            now=now or datetime.now(UTC),
            template=template,
            **options,
        )

    def add_webhook_sources(self: EventSourcesApp, sources: Sequence[WebhookSource]) -> None:
        """Configure more webhook sources (``serve --webhook-sources FILE`` calls this); each names an agent of
        the App and, if any, a registered event template. A name given twice is a ConfigurationError."""
        for source in sources:
            self.agent(source.agent)
            if source.template is not None and source.template not in self.event_templates:
                known = ", ".join(sorted(self.event_templates)) or "none"
                raise ConfigurationError(
                    f'webhook source "{source.name}" names the event template "{source.template}", which is not '
                    f"registered on the App (registered: {known})"
                )
            if source.name in self.webhook_sources:
                raise ConfigurationError(f'webhook source "{source.name}" is configured twice')
            self.webhook_sources[source.name] = source

    async def receive_source_event(
        self: EventSourcesApp,
        source: str,
        headers: Mapping[str, str],
        body: bytes,
        *,
        now: datetime | None = None,
        **options: Any,
    ) -> EventRun:
        """Start a run of the source's agent from one of its deliveries, verified as the source says, once per
        event id (``webhook-id``, else the source's ``event_id_field``): the same event again starts nothing and
        answers the first run (``duplicate=True``). Raises :class:`WebhookRefusedError` for a refused delivery
        and ConfigurationError for an unknown source."""
        configured = self.webhook_sources.get(source)
        if configured is None:
            raise ConfigurationError(f'no webhook source "{source}" is configured')
        return await receive_source_event(
            self,
            configured,
            {name.lower(): value for name, value in headers.items()},
            body,
            now=now or datetime.now(UTC),
            **options,
        )
