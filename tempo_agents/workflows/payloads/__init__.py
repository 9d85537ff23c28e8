"""Inputs and results that cross the workflow boundary, one module per boundary.

Kept small on purpose (ARCHITECTURE.md, "Durable-execution rules" 2): transcripts and tool outputs live in the store and
travel by run id; these models carry ids, names, arguments, counters and usage. Every name is exported here too, where
the rest of the package imports it from.
"""

from __future__ import annotations

from tempo_agents.workflows.payloads.answers import (
    MAX_CARRIED_ANSWERS,
    Answer,
    HandoffAccepted,
    HandoffRequest,
    Resolution,
    ResumeAccepted,
    ResumeRequest,
)
from tempo_agents.workflows.payloads.budgets import BudgetAnswer, BudgetState, BudgetWait
from tempo_agents.workflows.payloads.child_relay import ChildRelayInput, ChildRelayResult
from tempo_agents.workflows.payloads.model_step import ModelStepInput, ModelStepResult, ThreadCatchUp
from tempo_agents.workflows.payloads.pending_calls import CallAlarm, JournalInput, PendingCall
from tempo_agents.workflows.payloads.results import RunResult, RunSnapshot
from tempo_agents.workflows.payloads.run_input import CarriedState, ForkOrigin, MemoryRef, RunInput, RunOptions
from tempo_agents.workflows.payloads.segment_close import BatchClose, FinishInput, SegmentClose
from tempo_agents.workflows.payloads.tool_calls import Suspension, ToolCallInput, ToolCallRequest, ToolCallResult

__all__ = [
    "MAX_CARRIED_ANSWERS",
    "Answer",
    "BatchClose",
    "BudgetAnswer",
    "BudgetState",
    "BudgetWait",
    "CallAlarm",
    "CarriedState",
    "ChildRelayInput",
    "ChildRelayResult",
    "FinishInput",
    "ForkOrigin",
    "HandoffAccepted",
    "HandoffRequest",
    "JournalInput",
    "MemoryRef",
    "ModelStepInput",
    "ModelStepResult",
    "PendingCall",
    "Resolution",
    "ResumeAccepted",
    "ResumeRequest",
    "RunInput",
    "RunOptions",
    "RunResult",
    "RunSnapshot",
    "SegmentClose",
    "Suspension",
    "ThreadCatchUp",
    "ToolCallInput",
    "ToolCallRequest",
    "ToolCallResult",
]
