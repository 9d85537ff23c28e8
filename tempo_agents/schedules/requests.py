"""Schedules as the CLI and the HTTP API take them: a new schedule (:class:`ScheduleRequest`) and changes to one
(:class:`ScheduleChanges`), each with every run option ``App.schedule`` takes as a field of its own.

Numbers are strict (``true`` is not a step count, ``"2"`` and ``1.5`` are not either); what the fields hold is then
checked as ``App.schedule`` checks it (``App.build_options``: registered names, modes, budgets).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr

from tempo_agents._wire import WireModel
from tempo_agents.errors import ConfigurationError

__all__ = [
    "SCHEDULE_CHANGE_KEYS",
    "ScheduleChanges",
    "ScheduleRequest",
    "ScheduleRunOptions",
    "check_numbers",
]

PositiveSeconds = Annotated[StrictInt | StrictFloat, Field(gt=0)]

SCHEDULE_CHANGE_KEYS = frozenset(
    {"message", "cron", "every", "time_zone", "jitter", "overlap", "catchup_window", "note", "paused"}
)
"""What a change to a schedule may name besides run options."""


_WHOLE = ("max_steps",)
_SECONDS = ("remind_every_seconds", "escalate_after_seconds")


def check_numbers(options: dict[str, Any]) -> None:
    """The numbers among a schedule's run options, as strict as the HTTP API's: ``True`` is not a step count and
    ``"2"`` or ``2.5`` is not one either (a ConfigurationError naming the option)."""
    for name in _WHOLE:
        value = options.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigurationError(f"{name} is a whole number, got {value!r}")
    for name in _SECONDS:
        value = options.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConfigurationError(f"{name} is a number of seconds, got {value!r}")


class ScheduleRunOptions(WireModel):
    """The run options of a schedule's runs (``App.schedule``'s ``**options``), with the memory thread and
    resource as fields of their own."""

    thread: StrictStr | None = None
    resource: StrictStr | None = None
    max_steps: Annotated[StrictInt, Field(ge=1)] | None = None
    tool_choice: Any = None
    active_tools: list[StrictStr] | None = None
    request_context: dict[str, Any] | None = None
    hooks: StrictStr | None = Field(default=None, description="the name of hooks registered on the App")
    model_settings: dict[str, Any] | None = None
    require_tool_approval: StrictBool | StrictStr | None = Field(
        default=None, description="true, false, or the name of an approval policy registered on the App"
    )
    auto_resume_suspended_tools: StrictBool | None = None
    mode: StrictStr | None = None
    extra_instructions: StrictStr | None = None
    budget: dict[str, Any] | None = Field(
        default=None, description="limits on tokens and cost ({run, thread, resource, onExceeded})"
    )
    remind_every_seconds: PositiveSeconds | None = None
    escalate_after_seconds: PositiveSeconds | None = None
    escalate_to: list[StrictStr] | None = None

    def run_options(self) -> dict[str, Any]:
        """The options given (a field set to ``None`` is given: a change clears that option), as
        ``App.schedule`` takes them."""
        given = self.model_fields_set & set(ScheduleRunOptions.model_fields)
        if ("thread" in given) != ("resource" in given) or (self.thread is None) != (self.resource is None):
            raise ConfigurationError("thread and resource go together: pass both or neither")
        options: dict[str, Any] = {}
        if "thread" in given:
            options["memory"] = None if self.thread is None else {"thread": self.thread, "resource": self.resource}
        for name in sorted(given - {"thread", "resource"}):
            options[name] = getattr(self, name)
        return options


class ScheduleRequest(ScheduleRunOptions):
    """A new schedule: :func:`create_schedule`'s arguments and the run options of its runs."""

    agent_id: StrictStr
    message: StrictStr | list[dict[str, Any]]
    cron: StrictStr | None = None
    every: StrictStr | None = None
    schedule_id: StrictStr | None = None
    time_zone: StrictStr | None = None
    jitter: StrictStr | None = None
    overlap: StrictStr = "skip"
    catchup_window: StrictStr | None = None
    paused: StrictBool = False
    note: StrictStr | None = None

    def run_options(self) -> dict[str, Any]:
        return {key: value for key, value in super().run_options().items() if value is not None}


class ScheduleChanges(ScheduleRunOptions):
    """Changes to a schedule: only what is given changes; ``None`` clears an option (back to the agent's)."""

    message: StrictStr | list[dict[str, Any]] | None = None
    cron: StrictStr | None = None
    every: StrictStr | None = None
    time_zone: StrictStr | None = None
    jitter: StrictStr | None = None
    overlap: StrictStr | None = None
    catchup_window: StrictStr | None = None
    paused: StrictBool | None = None
    note: StrictStr | None = None

    def changes(self) -> dict[str, Any]:
        """The changes as :meth:`AgentSchedule.update` takes them."""
        given = {name: getattr(self, name) for name in self.model_fields_set & SCHEDULE_CHANGE_KEYS}
        return {**given, **self.run_options()}
