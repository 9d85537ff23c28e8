"""Old import paths of modules and names the feature-folder layout moved, kept working with a warning.

An import of a moved module (``tempo_agents.agent.app``) is answered by a module of the old name whose every
attribute is the new module's (``tempo_agents.client.app``), and emits a ``DeprecationWarning`` naming the new
path; a moved name (``tempo_agents.agent.App``) is looked up through the old module's ``__getattr__``, which calls
:func:`moved_name`. Both import the new place by name when first used, so this module imports nothing of the
package and sits below every layer.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import Any

__all__ = ["MOVED_MODULES", "MOVED_NAMES", "MovedModuleFinder", "install", "moved_name"]

_CLIENT = ["app", "budget_usage", "forking", "resume", "run_control", "run_queries", "update_resends"]
_CLIENT += ["waiting_runs"]
_INGRESS = ["event_memory", "events", "webhook_source_file", "webhook_sources", "webhooks"]

MOVED_MODULES: dict[str, str] = {
    **{f"tempo_agents.agent.{name}": f"tempo_agents.client.{name}" for name in _CLIENT},
    **{f"tempo_agents.agent.{name}": f"tempo_agents.ingress.{name}" for name in _INGRESS},
    **{f"tempo_agents.agent.{name}": f"tempo_agents.streams.{name}" for name in ["nested_chunks", "partial_args"]},
    "tempo_agents.agent.stream": "tempo_agents.streams.stream",
    "tempo_agents.agent.visibility": "tempo_agents.workflows.visibility_queries",
    "tempo_agents.agent.schedules": "tempo_agents.schedules.handles",
    "tempo_agents.agent.schedule_requests": "tempo_agents.schedules.requests",
    "tempo_agents.agent.schedule_cron": "tempo_agents.schedules.cron",
    "tempo_agents.agent.threads": "tempo_agents.threads.operations",
    "tempo_agents.agent.start_chunk": "tempo_agents.journal.start_chunk",
    "tempo_agents.agent.registry": "tempo_agents.activities.registry",
    "tempo_agents.agent.approval": "tempo_agents.approvals.policy",
    "tempo_agents.agent.approvers": "tempo_agents.approvals.approvers",
    "tempo_agents.answer_links": "tempo_agents.approvals.answer_links",
    "tempo_agents.answer_links.choices": "tempo_agents.approvals.answer_links.choices",
    "tempo_agents.answer_links.signing": "tempo_agents.approvals.answer_links.signing",
    "tempo_agents.telemetry.metrics": "tempo_agents.metrics.run_metrics",
    "tempo_agents.telemetry.run_scope": "tempo_agents.metrics.scope",
}
"""Each module path of the previous release that moved (old → new)."""

_TASK_LIST = ["NO_TASKS_FOUND", "NO_TASKS_TRACKED", "ONLY_ONE_IN_PROGRESS"]
_PATCHES = ["APPROVED_ARGUMENTS", "BUDGET_WAITS", "CALL_ALARMS", "REFUSED_RESUMES_RUN_ANEW"]
_PATCHES += ["RESUMED_CALLS_KEEP_OPTIONS", "RUNS_YIELD_THREADS"]

MOVED_NAMES: dict[tuple[str, str], tuple[str, str]] = {
    **{("tempo_agents.agent", name): ("tempo_agents.client", name) for name in ["App"]},
    **{("tempo_agents.agent", name): ("tempo_agents.streams", name) for name in ["AgentStream", "GenerateResult"]},
    **{("tempo_agents.agent", name): ("tempo_agents.streams", name) for name in ["ToolInputPreview"]},
    ("tempo_agents.agent", "parse_partial_args"): ("tempo_agents.streams", "parse_partial_args"),
    ("tempo_agents.activities.budget_gate", "is_budget_wait"): ("tempo_agents.budgets", "is_budget_wait"),
    **{
        ("tempo_agents.activities.model_step", name): ("tempo_agents.activities.model_calls", name)
        for name in ["invalid_arguments_message", "tool_not_found_message"]
    },
    ("tempo_agents.budgets.counters", "counters"): ("tempo_agents.budgets", "step_counters"),
    **{("tempo_agents.tools.builtin.task_list", name): ("tempo_agents.tasks.operations", name) for name in _TASK_LIST},
    **{
        ("tempo_agents.tools.builtin.task_signals", name): ("tempo_agents.tasks.signals", name)
        for name in ["DELTA_TAG"]
    },
    ("tempo_agents.tools.builtin.task_signals", "SNAPSHOT_TAG"): ("tempo_agents.tasks.signals", "SNAPSHOT_TAG"),
    ("tempo_agents.tools.builtin.task_list", "UPDATE_NEEDS_A_FIELD"): (
        "tempo_agents.tasks.inputs",
        "UPDATE_NEEDS_A_FIELD",
    ),
    **{("tempo_agents.workflows.agent_run", name): ("tempo_agents.workflows.run_patches", name) for name in _PATCHES},
    ("tempo_agents.workflows.agent_run", "WAIT_FOR_CANCELLATION"): (
        "tempo_agents.workflows.activity_calls",
        "WAIT_FOR_CANCELLATION",
    ),
    ("tempo_agents.workflows.thread_payloads", "RunState"): (
        "tempo_agents.workflows.thread_payloads",
        "ThreadRunState",
    ),
}
"""Each public name of the previous release that left its module or was renamed: (old module, old name) → (new
module, new name)."""


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(f"{old} moved to {new}; import it from there", DeprecationWarning, stacklevel=stacklevel + 1)


def moved_name(module: str, name: str) -> Any:
    """The object ``name`` of ``module`` moved to, after a ``DeprecationWarning`` naming its new path; an
    ``AttributeError`` when it is no moved name of that module (what a module's ``__getattr__`` must raise)."""
    moved = MOVED_NAMES.get((module, name))
    if moved is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new_module, new_name = moved
    _warn(f"{module}.{name}", f"{new_module}.{new_name}", stacklevel=3)  # the code reading the name
    return getattr(import_module(new_module), new_name)


class _MovedModuleLoader(importlib.abc.Loader):
    """Makes the module of an old path: a package if the new one is, every attribute read from the new one."""

    def __init__(self, new: str) -> None:
        self.new = new

    def exec_module(self, module: ModuleType) -> None:
        target = import_module(self.new)
        _warn(module.__name__, self.new, stacklevel=2)
        module.__doc__ = f"Moved to {self.new}: every name here is that module's."
        module.__all__ = list(getattr(target, "__all__", []))  # type: ignore[attr-defined]
        module.__getattr__ = lambda name: getattr(target, name)  # type: ignore[method-assign]
        module.__dir__ = lambda: dir(target)  # type: ignore[method-assign]


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`MOVED_MODULES` by their old names."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        is_package = any(old.startswith(fullname + ".") for old in MOVED_MODULES)
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(new), is_package=is_package)


def install() -> None:
    """Answer the old module paths from now on in this interpreter (once, however often it is called)."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
