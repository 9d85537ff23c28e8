"""Reading a run: its chunk stream, the result collected from it, and partial tool arguments as they arrive."""

from tempo_agents.streams.partial_args import ToolInputPreview, parse_partial_args
from tempo_agents.streams.run_tail import READ_BATCH
from tempo_agents.streams.stream import AgentStream, Follow, GenerateResult, RunClosedProbe, collect_result

__all__ = [
    "READ_BATCH",
    "AgentStream",
    "Follow",
    "GenerateResult",
    "RunClosedProbe",
    "ToolInputPreview",
    "collect_result",
    "parse_partial_args",
]
