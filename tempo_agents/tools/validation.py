"""Validation of tool inputs, outputs, suspend payloads and resume data.

A tool schema is either a pydantic ``BaseModel`` subclass or a JSON-schema dict. This module wraps both
behind :class:`Schema`, and turns failures into the exact error text and result shape that users and
models see.
"""

from __future__ import annotations

import copy
import inspect
import json
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators
from pydantic import BaseModel, ValidationError
from pydantic.errors import PydanticUserError
from pydantic_core import to_jsonable_python

from tempo_agents.errors import ConfigurationError

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

SchemaLike: TypeAlias = type[BaseModel] | dict[str, Any]
"""What a tool may declare as a schema: a pydantic model class or a JSON-schema dict."""

_PathItem: TypeAlias = str | int

ASYNC_SCHEMA_MESSAGE = "Your schema is async, which is not supported. Please use a sync schema."
"""The error text raised when a schema's validation would have to be awaited."""

_TRUNCATE_AT = 200
_TRUNCATION_SUFFIX = "... (truncated)"
_PROMPT_ALIASES = ("query", "message", "input")
_INPUT_HEADER = "Tool input validation failed for {tool_id}. Please fix the following errors and try again:"
_OUTPUT_HEADER = "Tool output validation failed for {tool_id}. The tool returned invalid output:"
_SUSPEND_HEADER = "Tool suspension data validation failed for {tool_id}. Please fix the following errors and try again:"


@dataclass(frozen=True)
class Issue:
    """One validation problem: where it is (keys and list indexes from the root) and what is wrong."""

    path: tuple[str | int, ...]
    message: str


class Schema:
    """Wraps a pydantic model class or a JSON-schema dict."""

    def __init__(self, source: SchemaLike) -> None:
        """Wrap ``source``; raises ``ConfigurationError`` if it is not a usable schema."""
        _reject_unusable(source)
        self._source: SchemaLike = source
        self._validator: jsonschema.protocols.Validator | None = None
        self._shape: dict[str, Any] | None = None
        if isinstance(source, dict):
            validator_cls = jsonschema.validators.validator_for(source, default=jsonschema.Draft202012Validator)
            try:
                validator_cls.check_schema(source)
            except jsonschema.exceptions.SchemaError as exc:
                raise ConfigurationError(f"Invalid JSON schema: {exc.message}") from exc
            self._validator = validator_cls(source)

    def __repr__(self) -> str:
        if isinstance(self._source, dict):
            return f"Schema({self._source!r})"
        return f"Schema({self._source.__qualname__})"

    @property
    def source(self) -> SchemaLike:
        """The model class or JSON-schema dict this schema was built from."""
        return self._source

    def validate(self, value: Any) -> tuple[Any, list[Issue]]:
        """Validate ``value``: ``(validated, [])`` on success, ``(None, issues)`` on failure.

        A pydantic source yields the model instance; a JSON-schema source yields a deep copy of ``value``.
        """
        if self._validator is None:
            model = typing.cast(type[BaseModel], self._source)
            try:
                return model.model_validate(value), []
            except ValidationError as exc:
                return None, [Issue(tuple(err["loc"]), err["msg"]) for err in exc.errors()]
        issues = list(_jsonschema_issues(self._validator, value))
        if issues:
            return None, issues
        return copy.deepcopy(value), []

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema: the model's ``model_json_schema()``, or the dict itself."""
        if isinstance(self._source, dict):
            return self._source
        return self._source.model_json_schema()

    def is_array(self) -> bool:
        """Whether the top level of the schema is of type ``array``."""
        declared = self._top_level().get("type")
        if isinstance(declared, list):
            return "array" in declared and "object" not in declared
        return declared == "array"

    def has_property(self, name: str) -> bool:
        """Whether the top-level object schema declares a property called ``name``."""
        properties = self._top_level().get("properties")
        return isinstance(properties, dict) and name in properties

    def _top_level(self) -> dict[str, Any]:
        if self._shape is None:
            self._shape = self._resolve_top_level()
        return self._shape

    def _resolve_top_level(self) -> dict[str, Any]:
        if isinstance(self._source, dict):
            document = self._source
        else:
            try:
                document = self._source.model_json_schema()
            except PydanticUserError:
                fields = self._source.model_fields
                return {"type": "object", "properties": {f.alias or name: {} for name, f in fields.items()}}
        ref = document.get("$ref")
        if isinstance(ref, str) and "properties" not in document and "type" not in document:
            target = _local_ref(document, ref)
            if target is not None:
                return target
        return document


def to_schema(source: SchemaLike | Schema | None) -> Schema | None:
    """Turn whatever a tool declared into a :class:`Schema` (``None`` stays ``None``).

    Raises ``ConfigurationError`` for anything that is neither a pydantic model class nor a JSON-schema
    dict, and for schemas whose validation would be async.
    """
    if source is None or isinstance(source, Schema):
        return source
    return Schema(source)


@dataclass(frozen=True)
class ValidationFailure:
    """A failed validation: the full user/model-visible message and the issues behind it."""

    message: str
    issues: tuple[Issue, ...]

    def to_result(self) -> dict[str, Any]:
        """The tool result handed back in place of the real one (see :func:`is_validation_result`)."""
        root_errors: list[str] = []
        fields: dict[str, dict[str, list[str]]] = {}
        for issue in self.issues:
            if issue.path:
                fields.setdefault(_join_path(issue.path), {"errors": []})["errors"].append(issue.message)
            else:
                root_errors.append(issue.message)
        return {
            "error": True,
            "message": self.message,
            "validationErrors": {"errors": root_errors, "fields": fields},
        }


def validate_input(tool_id: str, schema: Schema | None, value: Any) -> tuple[Any, ValidationFailure | None]:
    """Validate a tool's input, repairing the usual model mistakes before giving up.

    ``None`` becomes ``{}`` (``[]`` for array schemas). On failure, three repairs are tried in turn, each
    on top of the last: stringified JSON arrays/objects are parsed, ``None`` values at failing paths are
    dropped, and ``query``/``message``/``input`` is copied to a missing ``prompt``.
    """
    if schema is None:
        return value, None
    if value is None:
        value = [] if schema.is_array() else {}
    validated, issues = schema.validate(value)
    if not issues:
        return validated, None

    candidate = value
    repairs: tuple[Callable[[Any, list[Issue]], Any], ...] = (
        lambda current, _issues: _parse_stringified_json(current),
        _drop_none_at_issues,
        lambda current, _issues: _alias_prompt(schema, current),
    )
    for repair in repairs:
        repaired = repair(candidate, issues)
        if repaired is candidate:
            continue
        candidate = repaired
        validated, issues = schema.validate(candidate)
        if not issues:
            return validated, None
    return None, _failure(_INPUT_HEADER, "Provided arguments", tool_id, issues, value)


def validate_output(tool_id: str, schema: Schema | None, value: Any) -> tuple[Any, ValidationFailure | None]:
    """Validate what a tool returned; no repairs are attempted.

    A pydantic model instance that is not an instance of the output model is validated through its
    ``model_dump()``; against a JSON-schema dict it is validated (and returned) as its JSON-mode dump.
    """
    if schema is None:
        return value, None
    candidate = value
    if isinstance(value, BaseModel):
        source = schema.source
        if isinstance(source, dict):
            candidate = value.model_dump(mode="json", by_alias=True)
        elif not isinstance(value, source):
            candidate = value.model_dump()
    validated, issues = schema.validate(candidate)
    if not issues:
        return validated, None
    return None, _failure(_OUTPUT_HEADER, "Returned output", tool_id, issues, value)


def validate_suspend_payload(tool_id: str, schema: Schema | None, value: Any) -> tuple[Any, ValidationFailure | None]:
    """Validate the payload a tool suspends with; no repairs are attempted."""
    if schema is None:
        return value, None
    validated, issues = schema.validate(value)
    if not issues:
        return validated, None
    return None, _failure(_SUSPEND_HEADER, "Provided arguments", tool_id, issues, value)


def validate_resume_data(tool_id: str, schema: Schema | None, value: Any) -> tuple[Any, ValidationFailure | None]:
    """Validate the data a suspended tool is resumed with; no normalisation and no repairs."""
    if schema is None:
        return value, None
    validated, issues = schema.validate(value)
    if not issues:
        return validated, None
    return None, _failure(_INPUT_HEADER, "Provided arguments", tool_id, issues, value)


def format_provided(value: Any) -> str:
    """Render ``value`` as indented JSON for an error message, cut to 200 characters."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        try:
            text = json.dumps(to_jsonable_python(value), indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > _TRUNCATE_AT:
        return text[:_TRUNCATE_AT] + _TRUNCATION_SUFFIX
    return text


def is_validation_result(value: Any) -> bool:
    """Whether ``value`` has the shape of :meth:`ValidationFailure.to_result` output."""
    return (
        isinstance(value, dict)
        and value.get("error") is True
        and isinstance(value.get("message"), str)
        and isinstance(value.get("validationErrors"), dict)
    )


def _reject_unusable(source: object) -> None:
    if _is_async(source):
        raise ConfigurationError(ASYNC_SCHEMA_MESSAGE)
    if isinstance(source, dict):
        return
    if isinstance(source, type) and issubclass(source, BaseModel):
        if _has_async_validators(source, set()):
            raise ConfigurationError(ASYNC_SCHEMA_MESSAGE)
        return
    if isinstance(source, BaseModel):
        raise ConfigurationError(
            f"Invalid schema: got an instance of {type(source).__qualname__}; pass the model class itself."
        )
    described = source.__qualname__ if isinstance(source, type) else type(source).__qualname__
    raise ConfigurationError(
        f"Invalid schema {described!r}: expected a pydantic BaseModel subclass or a JSON-schema dict."
    )


def _is_async(source: object) -> bool:
    if inspect.isawaitable(source) or inspect.iscoroutinefunction(source):
        return True
    if isinstance(source, type) or not callable(source):
        return False
    return inspect.iscoroutinefunction(type(source).__call__)


def _has_async_validators(model: type[BaseModel], seen: set[type[BaseModel]]) -> bool:
    if model in seen:
        return False
    seen.add(model)
    decorators = model.__pydantic_decorators__
    groups = (
        decorators.validators,
        decorators.field_validators,
        decorators.root_validators,
        decorators.model_validators,
    )
    if any(inspect.iscoroutinefunction(dec.func) for group in groups for dec in group.values()):
        return True
    return any(
        _has_async_validators(nested, seen)
        for field in model.model_fields.values()
        for nested in _models_in(field.annotation)
    )


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def _jsonschema_issues(validator: jsonschema.protocols.Validator, value: Any) -> Iterator[Issue]:
    missing_seen: dict[tuple[tuple[_PathItem, ...], tuple[_PathItem, ...]], int] = {}
    for error in validator.iter_errors(value):
        path: tuple[_PathItem, ...] = tuple(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [
                name
                for name in typing.cast(list[Any], error.validator_value)
                if isinstance(name, str) and name not in error.instance
            ]
            key = (path, tuple(error.absolute_schema_path))
            index = missing_seen.get(key, 0)
            missing_seen[key] = index + 1
            if index < len(missing):
                path = (*path, missing[index])
        yield Issue(path, error.message)


def _local_ref(document: dict[str, Any], ref: str) -> dict[str, Any] | None:
    if not ref.startswith("#/"):
        return None
    target: Any = document
    for part in ref[2:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or key not in target:
            return None
        target = target[key]
    return target if isinstance(target, dict) else None


def _parse_stringified_json(value: Any) -> Any:
    """``value`` with stringified JSON arrays/objects parsed; the same object if nothing changed."""
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith(("[", "{")):
            return value
        try:
            return _parse_stringified_json(json.loads(stripped))
        except ValueError:
            return value
    if isinstance(value, dict):
        items = {key: _parse_stringified_json(item) for key, item in value.items()}
        if all(items[key] is item for key, item in value.items()):
            return value
        return items
    if isinstance(value, list):
        elements = [_parse_stringified_json(item) for item in value]
        if all(new is old for new, old in zip(elements, value, strict=True)):
            return value
        return elements
    return value


def _drop_none_at_issues(value: Any, issues: list[Issue]) -> Any:
    """``value`` without ``None``-valued keys on the failing paths; the same object if nothing changed."""
    result = value
    for issue in issues:
        result = _drop_none_along(result, issue.path)
    return result


def _drop_none_along(value: Any, path: tuple[_PathItem, ...]) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        child = value[head]
        if child is None:
            return {key: item for key, item in value.items() if key != head}
        replaced = _drop_none_along(child, rest)
        if replaced is child:
            return value
        return {**value, head: replaced}
    if isinstance(value, list) and isinstance(head, int) and -len(value) <= head < len(value):
        child = value[head]
        replaced = _drop_none_along(child, rest)
        if replaced is child:
            return value
        elements = list(value)
        elements[head] = replaced
        return elements
    return value


def _alias_prompt(schema: Schema, value: Any) -> Any:
    if not isinstance(value, dict) or "prompt" in value or not schema.has_property("prompt"):
        return value
    for alias in _PROMPT_ALIASES:
        if alias in value:
            return {**value, "prompt": value[alias]}
    return value


def _join_path(path: tuple[_PathItem, ...]) -> str:
    return ".".join(str(part) for part in path)


def _issue_line(issue: Issue) -> str:
    location = _join_path(issue.path) if issue.path else "root"
    return f"- {location}: {issue.message}"


def _failure(header: str, label: str, tool_id: str, issues: list[Issue], provided: Any) -> ValidationFailure:
    lines = "\n".join(_issue_line(issue) for issue in issues)
    message = f"{header.format(tool_id=tool_id)}\n{lines}\n\n{label}: {format_provided(provided)}"
    return ValidationFailure(message=message, issues=tuple(issues))
