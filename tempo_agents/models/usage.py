"""Token usage reported by a model."""

from __future__ import annotations

from tempo_agents._wire import WireModel

__all__ = ["Usage"]


class Usage(WireModel):
    """Token counts of one model step, or of a whole run when added up."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )
