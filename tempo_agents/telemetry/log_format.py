"""JSON log lines (``--log-format json``): one object a line, with the run and tool call they belong to.

Inside an activity, every record carries ``run_id`` (the workflow id) and, in a tool call, ``tool_call_id``
and ``tool_name``, whatever logger emitted it (a tool's own ``logging.getLogger(__name__)`` included), plus
the activity's type and attempt. ``temporalio.activity.logger``'s structured ``temporal_activity`` extra is
kept too.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

from temporalio import activity

from tempo_agents.metrics import current_scope

__all__ = ["LOG_FORMATS", "JsonLogFormatter", "LogFormat", "configure_logging"]

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

_STANDARD_ATTRIBUTES = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys() | {"message", "asctime", "taskName"}
)


class JsonLogFormatter(logging.Formatter):
    """Formats a record as one JSON object: time, level, logger, message, the run scope, extras."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        scope = current_scope()
        if scope is not None:
            line["run_id"] = scope.run_id
            line["agent_id"] = scope.agent_id
            if scope.tool_call_id is not None:
                line["tool_call_id"] = scope.tool_call_id
                line["tool_name"] = scope.tool_name
        if activity.in_activity():
            info = activity.info()
            line.setdefault("run_id", info.workflow_id)
            line["activity"] = info.activity_type
            line["attempt"] = info.attempt
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRIBUTES and key not in line:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_logging(log_format: LogFormat, level: int = logging.INFO) -> None:
    """Send the root logger's records to stderr, as JSON lines or as text."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
