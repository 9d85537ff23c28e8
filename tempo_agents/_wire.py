"""Base model for everything that crosses a boundary: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["WireModel"]


class WireModel(BaseModel):
    """A pydantic model whose JSON form uses camelCase field names."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    def to_wire(self) -> dict[str, object]:
        """The JSON-ready camelCase form, without unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
