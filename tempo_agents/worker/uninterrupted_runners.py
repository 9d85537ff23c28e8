"""Workflow runners that leave tempo-agents' own workflows whole when one of their workflow tasks outlasts the
deadlock timeout.

The SDK fails a workflow task that runs longer than its deadlock timeout (two seconds), and then:

- to unstick the workflow code, it raises an exception into the thread running the task, wherever that thread is;
- Temporal evicts the workflow, and the SDK means to wait for the slow task's thread before it runs the eviction, but
  the future it waits on was cancelled when the timeout struck, so the eviction runs at once, in another thread, on
  the same workflow while the slow task still runs.

Tempo-agents' own workflows (``OWN_WORKFLOWS``) run no user code and never block: each of their tasks takes
milliseconds, so one that slow is a thread starved on a loaded machine. Either way the workflow's event loop loses a
task's wake-up (the exception lands where the loop schedules it, or the eviction cancels the task before the slow
thread schedules it): that task never runs again, not even to be cancelled, so the eviction cannot finish, the SDK
retries it for ever ("could not be evicted"), the workflow makes no progress on the worker and the worker's shutdown
hangs. So these runners hand out the instances of ``OWN_WORKFLOWS`` behind a wrapper that names no thread to interrupt
(the SDK interrupts the one ``WorkflowInstance.get_thread_id`` names, which an instance may leave unanswered; a
deadlock error then carries no stack trace) and runs one activation of the instance at a time (the eviction waits for
the slow task). The slow task then ends as it would have, is failed as a deadlock all the same (its result is
dropped), and the eviction finds the workflow's loop whole; the workflow is replayed and goes on. Other workflows
(workflow tools) are run as the SDK runs them.
"""

from __future__ import annotations

import threading
from typing import Any

import temporalio.bridge.proto.workflow_activation
import temporalio.bridge.proto.workflow_completion
import temporalio.converter
import temporalio.workflow
from temporalio.worker import UnsandboxedWorkflowRunner, WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from tempo_agents.notifications import NOTIFICATION_DELIVERY_WORKFLOW
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW, THREAD_WORKFLOW

__all__ = ["OWN_WORKFLOWS", "UninterruptedSandboxedRunner", "UninterruptedUnsandboxedRunner", "uninterrupted"]

OWN_WORKFLOWS = frozenset({AGENT_RUN_WORKFLOW, THREAD_WORKFLOW, NOTIFICATION_DELIVERY_WORKFLOW})
"""The workflows of tempo-agents itself, which its worker runs uninterrupted."""


class _UninterruptedInstance(WorkflowInstance):
    """A workflow instance that names no thread to interrupt and runs one activation at a time; everything else is
    the wrapped instance's."""

    def __init__(self, instance: WorkflowInstance) -> None:
        self._instance = instance
        self._activating = threading.Lock()

    def activate(
        self, act: temporalio.bridge.proto.workflow_activation.WorkflowActivation
    ) -> temporalio.bridge.proto.workflow_completion.WorkflowActivationCompletion:
        with self._activating:  # an eviction waits here for a task the SDK gave up on
            return self._instance.activate(act)

    def get_serialization_context(self, command_info: Any) -> temporalio.converter.SerializationContext | None:
        return self._instance.get_serialization_context(command_info)

    def get_external_store_context(self, command_info: Any) -> temporalio.converter.StorageDriverStoreContext:
        return self._instance.get_external_store_context(command_info)

    def get_info(self) -> temporalio.workflow.Info:
        return self._instance.get_info()

    def get_thread_id(self) -> int | None:
        return None


def uninterrupted(instance: WorkflowInstance, details: WorkflowInstanceDetails) -> WorkflowInstance:
    """The instance as a worker should run it: behind the wrapper when it is one of ``OWN_WORKFLOWS``."""
    if details.defn.name in OWN_WORKFLOWS:
        return _UninterruptedInstance(instance)
    return instance


class UninterruptedSandboxedRunner(SandboxedWorkflowRunner):
    """The SDK's sandboxed runner (still one: what adjusts a sandboxed runner adjusts it), handing out
    ``OWN_WORKFLOWS`` uninterrupted."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return uninterrupted(super().create_instance(det), det)


class UninterruptedUnsandboxedRunner(UnsandboxedWorkflowRunner):
    """The SDK's runner for workflows outside the sandbox, handing out ``OWN_WORKFLOWS`` uninterrupted."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return uninterrupted(super().create_instance(det), det)
