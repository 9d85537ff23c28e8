"""Deprecated alias of :mod:`tempo_agents.tools.validation` (the module's earlier, private name)."""

from tempo_agents.tools.validation import (
    ASYNC_SCHEMA_MESSAGE,
    Issue,
    Schema,
    SchemaLike,
    ValidationFailure,
    format_provided,
    is_validation_result,
    to_schema,
    validate_input,
    validate_output,
    validate_resume_data,
    validate_suspend_payload,
)

__all__ = [
    "ASYNC_SCHEMA_MESSAGE",
    "Issue",
    "Schema",
    "SchemaLike",
    "ValidationFailure",
    "format_provided",
    "is_validation_result",
    "to_schema",
    "validate_input",
    "validate_output",
    "validate_resume_data",
    "validate_suspend_payload",
]
