"""Stream chunks: every event a client sees of a run, in the wire shapes of the reference.

Each chunk is ``{type, runId, from, payload}`` on the wire. In Python the payload is a typed
model with snake_case attributes (``chunk.payload.tool_call_id``). ``data-*`` chunks written by
tools through ``writer.custom`` keep the tool's own fields.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter

from tempo_agents._wire import WireModel
from tempo_agents.models.usage import Usage

__all__ = [
    "AbortChunk",
    "Approval",
    "Chunk",
    "ChunkSource",
    "DataChunk",
    "ErrorChunk",
    "ErrorPayload",
    "FinishChunk",
    "FinishPayload",
    "NamedCallPayload",
    "RunOutput",
    "StartChunk",
    "StartPayload",
    "StepFinishChunk",
    "StepFinishPayload",
    "StepOutput",
    "StepResetChunk",
    "StepResetPayload",
    "StepResult",
    "StepStartChunk",
    "StepStartPayload",
    "TextDeltaChunk",
    "TextDeltaPayload",
    "ToolCallApprovalChunk",
    "ToolCallApprovalPayload",
    "ToolCallChunk",
    "ToolCallDeltaChunk",
    "ToolCallDeltaPayload",
    "ToolCallPayload",
    "ToolCallSuspendedChunk",
    "ToolCallSuspendedPayload",
    "ToolErrorChunk",
    "ToolErrorPayload",
    "ToolInputStreamingEndChunk",
    "ToolInputStreamingEndPayload",
    "ToolInputStreamingStartChunk",
    "ToolInputStreamingStartPayload",
    "ToolOutputChunk",
    "ToolOutputDeniedChunk",
    "ToolOutputDeniedPayload",
    "ToolOutputPayload",
    "ToolResultChunk",
    "ToolResultPayload",
    "chunk_adapter",
    "chunk_from_wire",
    "chunk_to_wire",
]

ChunkSource: TypeAlias = Literal["AGENT", "USER", "SYSTEM", "WORKFLOW", "NETWORK"]


class _ChunkBase(WireModel):
    run_id: str
    from_: ChunkSource = Field(default="AGENT", alias="from")
    offset: int | None = None
    """Position in the run journal; set on chunks read from the journal."""


class StartPayload(WireModel):
    """``agentId``; a fork's first ``start`` also has ``forkOf`` (``{"runId", "step"}``: where it was forked from),
    kept as an extra field so every other run's ``start`` reads exactly as before."""

    model_config = ConfigDict(extra="allow")

    agent_id: str


class StepStartPayload(WireModel):
    step_number: int
    warnings: list[str] = Field(default_factory=list)


class StepResetPayload(WireModel):
    """A model step is retried: every chunk from ``discard_from`` up to this one belongs to a failed attempt."""

    step_number: int
    attempt: int
    discard_from: int | None = None


class NamedCallPayload(WireModel):
    """The first fields of a payload about one tool call, in wire order: the call's id and its tool's name."""

    tool_call_id: str
    tool_name: str


class TextDeltaPayload(WireModel):
    id: str
    text: str


class ToolCallPayload(NamedCallPayload):
    args: Any = None
    provider_executed: bool | None = None


class ToolInputStreamingStartPayload(NamedCallPayload):
    pass


class ToolCallDeltaPayload(WireModel):
    tool_call_id: str
    tool_name: str | None = None
    args_text_delta: str


class ToolInputStreamingEndPayload(WireModel):
    tool_call_id: str


class ToolOutputPayload(WireModel):
    output: Any = None
    tool_call_id: str
    tool_name: str


class ToolResultPayload(NamedCallPayload):
    result: Any = None
    is_error: bool | None = None
    args: Any = None
    provider_executed: bool | None = None
    answered_by: str | None = None


class ToolErrorPayload(NamedCallPayload):
    args: Any = None
    error: str
    answered_by: str | None = None


class ToolCallSuspendedPayload(NamedCallPayload):
    suspend_payload: Any = None
    args: Any = None
    resume_schema: str = ""
    approvers: list[str] | None = None
    """Who may answer (principals, ``group:<name>``); absent: anyone."""


class ToolCallApprovalPayload(NamedCallPayload):
    args: Any = None
    resume_schema: str = ""
    approvers: list[str] | None = None
    """Who may answer (principals, ``group:<name>``); absent: anyone."""


class Approval(WireModel):
    id: str
    approved: bool
    reason: str | None = None
    expired: bool | None = None


class ToolOutputDeniedPayload(NamedCallPayload):
    args: Any = None
    approval: Approval
    answered_by: str | None = None


class StepResult(WireModel):
    reason: str
    is_continued: bool = False
    warnings: list[str] = Field(default_factory=list)


class StepOutput(WireModel):
    text: str = ""
    tool_calls: list[ToolCallPayload] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class StepFinishPayload(WireModel):
    step_result: StepResult
    output: StepOutput
    metadata: dict[str, Any] = Field(default_factory=dict)


class RunOutput(WireModel):
    text: str = ""
    tool_calls: list[ToolCallPayload] = Field(default_factory=list)
    tool_results: list[ToolResultPayload] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    steps: int = 0


class FinishPayload(WireModel):
    step_result: StepResult
    output: RunOutput
    metadata: dict[str, Any] = Field(default_factory=dict)


class ErrorPayload(WireModel):
    error: str


class StartChunk(_ChunkBase):
    type: Literal["start"] = "start"
    payload: StartPayload


class StepStartChunk(_ChunkBase):
    type: Literal["step-start"] = "step-start"
    payload: StepStartPayload


class StepResetChunk(_ChunkBase):
    """A retried model step starts over: clients drop the text this step streamed so far."""

    type: Literal["step-reset"] = "step-reset"
    payload: StepResetPayload


class TextDeltaChunk(_ChunkBase):
    type: Literal["text-delta"] = "text-delta"
    payload: TextDeltaPayload


class ToolInputStreamingStartChunk(_ChunkBase):
    type: Literal["tool-call-input-streaming-start"] = "tool-call-input-streaming-start"
    payload: ToolInputStreamingStartPayload


class ToolCallDeltaChunk(_ChunkBase):
    type: Literal["tool-call-delta"] = "tool-call-delta"
    payload: ToolCallDeltaPayload


class ToolInputStreamingEndChunk(_ChunkBase):
    type: Literal["tool-call-input-streaming-end"] = "tool-call-input-streaming-end"
    payload: ToolInputStreamingEndPayload


class ToolCallChunk(_ChunkBase):
    type: Literal["tool-call"] = "tool-call"
    payload: ToolCallPayload


class ToolOutputChunk(_ChunkBase):
    type: Literal["tool-output"] = "tool-output"
    from_: ChunkSource = Field(default="USER", alias="from")
    payload: ToolOutputPayload


class ToolResultChunk(_ChunkBase):
    type: Literal["tool-result"] = "tool-result"
    payload: ToolResultPayload


class ToolErrorChunk(_ChunkBase):
    type: Literal["tool-error"] = "tool-error"
    payload: ToolErrorPayload


class ToolCallSuspendedChunk(_ChunkBase):
    type: Literal["tool-call-suspended"] = "tool-call-suspended"
    payload: ToolCallSuspendedPayload


class ToolCallApprovalChunk(_ChunkBase):
    type: Literal["tool-call-approval"] = "tool-call-approval"
    payload: ToolCallApprovalPayload


class ToolOutputDeniedChunk(_ChunkBase):
    type: Literal["tool-output-denied"] = "tool-output-denied"
    payload: ToolOutputDeniedPayload


class StepFinishChunk(_ChunkBase):
    type: Literal["step-finish"] = "step-finish"
    payload: StepFinishPayload


class FinishChunk(_ChunkBase):
    type: Literal["finish"] = "finish"
    payload: FinishPayload


class ErrorChunk(_ChunkBase):
    type: Literal["error"] = "error"
    payload: ErrorPayload


class AbortChunk(_ChunkBase):
    """The run was cancelled from outside."""

    type: Literal["abort"] = "abort"
    payload: dict[str, Any] = Field(default_factory=dict)


class DataChunk(WireModel):
    """A custom ``data-*`` chunk; any fields the tool wrote are kept as they were."""

    model_config = ConfigDict(extra="allow")

    type: str
    run_id: str | None = None
    from_: ChunkSource = Field(default="USER", alias="from")
    offset: int | None = None


def _chunk_tag(value: Any) -> str:
    chunk_type = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if isinstance(chunk_type, str) and chunk_type.startswith("data-"):
        return "data"
    return str(chunk_type)


Chunk: TypeAlias = Annotated[
    Annotated[StartChunk, Tag("start")]
    | Annotated[StepStartChunk, Tag("step-start")]
    | Annotated[StepResetChunk, Tag("step-reset")]
    | Annotated[TextDeltaChunk, Tag("text-delta")]
    | Annotated[ToolInputStreamingStartChunk, Tag("tool-call-input-streaming-start")]
    | Annotated[ToolCallDeltaChunk, Tag("tool-call-delta")]
    | Annotated[ToolInputStreamingEndChunk, Tag("tool-call-input-streaming-end")]
    | Annotated[ToolCallChunk, Tag("tool-call")]
    | Annotated[ToolOutputChunk, Tag("tool-output")]
    | Annotated[ToolResultChunk, Tag("tool-result")]
    | Annotated[ToolErrorChunk, Tag("tool-error")]
    | Annotated[ToolCallSuspendedChunk, Tag("tool-call-suspended")]
    | Annotated[ToolCallApprovalChunk, Tag("tool-call-approval")]
    | Annotated[ToolOutputDeniedChunk, Tag("tool-output-denied")]
    | Annotated[StepFinishChunk, Tag("step-finish")]
    | Annotated[FinishChunk, Tag("finish")]
    | Annotated[ErrorChunk, Tag("error")]
    | Annotated[AbortChunk, Tag("abort")]
    | Annotated[DataChunk, Tag("data")],
    Discriminator(_chunk_tag),
]

chunk_adapter: TypeAdapter[Chunk] = TypeAdapter(Chunk)


def chunk_to_wire(chunk: Chunk) -> dict[str, Any]:
    """The chunk as JSON-ready camelCase, as the journal stores it and SSE sends it."""
    return chunk.model_dump(mode="json", by_alias=True, exclude_none=True)


def chunk_from_wire(data: dict[str, Any], offset: int | None = None) -> Chunk:
    """Parse a journal row back into a typed chunk."""
    if offset is not None:
        data = {**data, "offset": offset}
    return chunk_adapter.validate_python(data)
