"""JSON value types shared by every module that moves data across a boundary."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JsonObject", "JsonValue"]

JsonValue: TypeAlias = Any
"""Any value that survives ``json.dumps``; kept as ``Any`` so pydantic models accept it unchanged."""

JsonObject: TypeAlias = dict[str, Any]
