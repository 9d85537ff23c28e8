"""Tests for tool schema validation and the exact error texts it produces."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, RootModel, field_validator

from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.validation import (
    Issue,
    Schema,
    ValidationFailure,
    format_provided,
    is_validation_result,
    to_schema,
    validate_input,
    validate_output,
    validate_resume_data,
    validate_suspend_payload,
)

INPUT_HEADER = "Tool input validation failed for {}. Please fix the following errors and try again:\n"


class Inner(BaseModel):
    b: int


class Outer(BaseModel):
    a: Inner


class Item(BaseModel):
    name: str


class Basket(BaseModel):
    items: list[Item]


class Tagged(BaseModel):
    tags: list[str]
    limit: int = 10


class Depth(BaseModel):
    level: int


class Config(BaseModel):
    depth: Depth
    label: str


class Configured(BaseModel):
    config: Config


class Limited(BaseModel):
    limit: int = 10


class Rows(BaseModel):
    rows: list[Limited]


class Either(BaseModel):
    key: int | str = 1


class Nullable(BaseModel):
    limit: int | None = 10


class Prompted(BaseModel):
    prompt: str
    temperature: float = 0.5


class Defaults(BaseModel):
    verbose: bool = False


class Named(BaseModel):
    name: str


class Counted(BaseModel):
    count: int


class OtherCounted(BaseModel):
    count: int


class Reason(BaseModel):
    reason: str


class Text(RootModel[str]):
    pass


class Numbers(RootModel[list[int]]):
    pass


class Node(BaseModel):
    prompt: str
    children: list[Node] = []


class Aliased(BaseModel):
    user_prompt: str = Field(alias="prompt")


def schema_of(source: type[BaseModel] | dict[str, Any]) -> Schema:
    schema = to_schema(source)
    assert schema is not None
    return schema


def failure_of(result: tuple[Any, ValidationFailure | None]) -> ValidationFailure:
    value, failure = result
    assert value is None
    assert failure is not None
    return failure


def test_missing_nested_field_message() -> None:
    failure = failure_of(validate_input("weather", schema_of(Outer), {"a": {}}))
    assert failure.message == (
        INPUT_HEADER.format("weather") + '- a.b: Field required\n\nProvided arguments: {\n  "a": {}\n}'
    )
    assert failure.issues == (Issue(("a", "b"), "Field required"),)


def test_wrong_nested_type_message() -> None:
    failure = failure_of(validate_input("weather", schema_of(Outer), {"a": {"b": "x"}}))
    assert failure.message == (
        INPUT_HEADER.format("weather")
        + "- a.b: Input should be a valid integer, unable to parse string as an integer\n\n"
        + 'Provided arguments: {\n  "a": {\n    "b": "x"\n  }\n}'
    )


def test_list_index_path_message() -> None:
    failure = failure_of(validate_input("shop", schema_of(Basket), {"items": [{"name": "ok"}, {}]}))
    assert failure.message == (
        INPUT_HEADER.format("shop")
        + "- items.1.name: Field required\n\n"
        + 'Provided arguments: {\n  "items": [\n    {\n      "name": "ok"\n    },\n    {}\n  ]\n}'
    )
    assert failure.issues == (Issue(("items", 1, "name"), "Field required"),)


def test_list_index_zero_path() -> None:
    failure = failure_of(validate_input("shop", schema_of(Basket), {"items": [{"name": 3}]}))
    assert failure.issues == (Issue(("items", 0, "name"), "Input should be a valid string"),)
    assert "\n- items.0.name: Input should be a valid string\n\n" in failure.message


def test_several_issues_listed_in_order() -> None:
    failure = failure_of(validate_input("t", schema_of(Prompted), {"prompt": 1, "temperature": "hot"}))
    assert failure.message == (
        INPUT_HEADER.format("t")
        + "- prompt: Input should be a valid string\n"
        + "- temperature: Input should be a valid number, unable to parse string as a number\n\n"
        + 'Provided arguments: {\n  "prompt": 1,\n  "temperature": "hot"\n}'
    )


def test_object_schema_given_list_reports_root() -> None:
    failure = failure_of(validate_input("t", schema_of(Named), [1, 2]))
    assert failure.message == (
        INPUT_HEADER.format("t")
        + "- root: Input should be a valid dictionary or instance of Named\n\n"
        + "Provided arguments: [\n  1,\n  2\n]"
    )
    assert failure.issues == (Issue((), "Input should be a valid dictionary or instance of Named"),)


def test_root_model_reports_root() -> None:
    failure = failure_of(validate_input("t", schema_of(Text), 5))
    assert failure.message == (
        INPUT_HEADER.format("t") + "- root: Input should be a valid string\n\nProvided arguments: 5"
    )


def test_long_provided_value_is_truncated_to_200_characters() -> None:
    value = {"name": 7, "text": "x" * 300}
    failure = failure_of(validate_input("t", schema_of(Named), value))
    rendered = '{\n  "name": 7,\n  "text": "' + "x" * 300 + '"\n}'
    assert failure.message == (
        INPUT_HEADER.format("t")
        + "- name: Input should be a valid string\n\n"
        + "Provided arguments: "
        + rendered[:200]
        + "... (truncated)"
    )
    assert failure.message.endswith("x... (truncated)")


def test_format_provided_truncation_boundary() -> None:
    exactly_200 = "x" * 198
    assert format_provided(exactly_200) == '"' + "x" * 198 + '"'
    assert len(format_provided(exactly_200)) == 200
    assert format_provided("x" * 199) == '"' + "x" * 199 + "... (truncated)"


def test_format_provided_renders_models_and_unencodable_values() -> None:
    assert format_provided(Aliased(prompt="héllo")) == '{\n  "prompt": "héllo"\n}'
    assert format_provided({"when": {3}}) == '{\n  "when": [\n    3\n  ]\n}'
    marker = object()
    assert format_provided(marker) == repr(marker)


def test_retry_parses_stringified_json_list() -> None:
    value, failure = validate_input("t", schema_of(Tagged), {"tags": ' ["a", "b"] '})
    assert failure is None
    assert value == Tagged(tags=["a", "b"], limit=10)


def test_retry_parses_stringified_nested_object() -> None:
    raw = {"config": '{"depth": {"level": 3}, "label": "deep"}'}
    value, failure = validate_input("t", schema_of(Configured), raw)
    assert failure is None
    assert value == Configured(config=Config(depth=Depth(level=3), label="deep"))
    assert raw == {"config": '{"depth": {"level": 3}, "label": "deep"}'}


def test_retry_parses_stringified_json_inside_lists() -> None:
    value, failure = validate_input("shop", schema_of(Basket), {"items": ['{"name": "pear"}']})
    assert failure is None
    assert value == Basket(items=[Item(name="pear")])


def test_retry_parses_doubly_stringified_json() -> None:
    raw = {"config": json.dumps({"depth": json.dumps({"level": 4}), "label": "twice"})}
    value, failure = validate_input("t", schema_of(Configured), raw)
    assert failure is None
    assert value == Configured(config=Config(depth=Depth(level=4), label="twice"))


def test_unparseable_json_text_is_left_alone() -> None:
    failure = failure_of(validate_input("t", schema_of(Tagged), {"tags": "[a, b"}))
    assert failure.issues == (Issue(("tags",), "Input should be a valid list"),)
    assert failure.message.endswith('Provided arguments: {\n  "tags": "[a, b"\n}')


def test_retry_strips_null_for_optional_non_nullable_field() -> None:
    raw = {"limit": None}
    value, failure = validate_input("t", schema_of(Limited), raw)
    assert failure is None
    assert value == Limited(limit=10)
    assert raw == {"limit": None}


def test_retry_strips_null_inside_list_elements() -> None:
    raw = {"rows": [{"limit": 3}, {"limit": None}]}
    value, failure = validate_input("t", schema_of(Rows), raw)
    assert failure is None
    assert value == Rows(rows=[Limited(limit=3), Limited(limit=10)])
    assert raw == {"rows": [{"limit": 3}, {"limit": None}]}


def test_retry_strips_null_for_union_field() -> None:
    value, failure = validate_input("t", schema_of(Either), {"key": None})
    assert failure is None
    assert value == Either(key=1)


def test_nullable_field_keeps_null() -> None:
    value, failure = validate_input("t", schema_of(Nullable), {"limit": None})
    assert failure is None
    assert value == Nullable(limit=None)


def test_retries_build_on_each_other() -> None:
    value, failure = validate_input("t", schema_of(Tagged), {"tags": '["a"]', "limit": None})
    assert failure is None
    assert value == Tagged(tags=["a"], limit=10)


def test_retry_aliases_query_to_prompt() -> None:
    value, failure = validate_input("t", schema_of(Prompted), {"query": "hi", "temperature": 0.9})
    assert failure is None
    assert value == Prompted(prompt="hi", temperature=0.9)


def test_prompt_alias_prefers_query_then_message_then_input() -> None:
    value, failure = validate_input("t", schema_of(Prompted), {"input": "c", "message": "b"})
    assert failure is None
    assert value == Prompted(prompt="b")


def test_prompt_alias_uses_schema_property_name() -> None:
    value, failure = validate_input("t", schema_of(Aliased), {"message": "hello"})
    assert failure is None
    assert value == Aliased(prompt="hello")


def test_prompt_alias_not_applied_without_prompt_property() -> None:
    failure = failure_of(validate_input("t", schema_of(Named), {"query": "hi"}))
    assert failure.issues == (Issue(("name",), "Field required"),)


def test_failure_after_retries_reports_last_attempt_and_original_input() -> None:
    failure = failure_of(validate_input("t", schema_of(Tagged), {"tags": '["a"]', "limit": "many"}))
    assert failure.message == (
        INPUT_HEADER.format("t")
        + "- limit: Input should be a valid integer, unable to parse string as an integer\n\n"
        + 'Provided arguments: {\n  "tags": "[\\"a\\"]",\n  "limit": "many"\n}'
    )
    assert failure.issues == (
        Issue(("limit",), "Input should be a valid integer, unable to parse string as an integer"),
    )


def test_none_input_becomes_empty_object() -> None:
    value, failure = validate_input("t", schema_of(Defaults), None)
    assert failure is None
    assert value == Defaults(verbose=False)

    failure = failure_of(validate_input("t", schema_of(Named), None))
    assert failure.message == INPUT_HEADER.format("t") + "- name: Field required\n\nProvided arguments: {}"


def test_none_input_becomes_empty_list_for_array_schema() -> None:
    value, failure = validate_input("t", schema_of(Numbers), None)
    assert failure is None
    assert value == Numbers([])

    listed, failure = validate_input("t", schema_of({"type": "array", "items": {"type": "integer"}}), None)
    assert failure is None
    assert listed == []


def test_json_schema_missing_required_property_points_at_property() -> None:
    schema = schema_of(
        {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
        }
    )
    failure = failure_of(validate_input("forecast", schema, {"days": 3}))
    assert failure.message == (
        INPUT_HEADER.format("forecast")
        + "- city: 'city' is a required property\n\n"
        + 'Provided arguments: {\n  "days": 3\n}'
    )
    assert failure.issues == (Issue(("city",), "'city' is a required property"),)


def test_json_schema_several_missing_required_properties() -> None:
    schema = schema_of(
        {
            "type": "object",
            "properties": {"outer": {"type": "object", "required": ["x", "y", "z"]}},
        }
    )
    failure = failure_of(validate_input("t", schema, {"outer": {"y": 1}}))
    assert failure.issues == (
        Issue(("outer", "x"), "'x' is a required property"),
        Issue(("outer", "z"), "'z' is a required property"),
    )


def test_json_schema_wrong_type() -> None:
    schema = schema_of({"type": "object", "properties": {"days": {"type": "integer"}}})
    failure = failure_of(validate_input("forecast", schema, {"days": "three"}))
    assert failure.message == (
        INPUT_HEADER.format("forecast")
        + "- days: 'three' is not of type 'integer'\n\n"
        + 'Provided arguments: {\n  "days": "three"\n}'
    )


def test_json_schema_success_returns_deep_copy() -> None:
    schema = schema_of({"type": "object", "properties": {"tags": {"type": "array"}}})
    raw = {"tags": ["a"]}
    value, failure = validate_input("t", schema, raw)
    assert failure is None
    assert value == {"tags": ["a"]}
    assert value is not raw
    assert value["tags"] is not raw["tags"]


def test_json_schema_retries_apply() -> None:
    schema = schema_of(
        {
            "type": "object",
            "properties": {
                "prompt": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer"},
            },
            "required": ["prompt"],
        }
    )
    value, failure = validate_input("t", schema, {"query": "q", "tags": '["x"]', "limit": None})
    assert failure is None
    assert value == {"query": "q", "prompt": "q", "tags": ["x"]}


def test_json_schema_honours_declared_draft() -> None:
    schema = schema_of(
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
        }
    )
    failure = failure_of(validate_input("t", schema, {"n": 0}))
    assert failure.issues == (Issue(("n",), "0 is less than or equal to the minimum of 0"),)


def test_output_failure_message() -> None:
    failure = failure_of(validate_output("counter", schema_of(Counted), {"count": "lots"}))
    assert failure.message == (
        "Tool output validation failed for counter. The tool returned invalid output:\n"
        + "- count: Input should be a valid integer, unable to parse string as an integer\n\n"
        + 'Returned output: {\n  "count": "lots"\n}'
    )


def test_output_is_not_repaired() -> None:
    failure = failure_of(validate_output("t", schema_of(Limited), {"limit": None}))
    assert failure.issues == (Issue(("limit",), "Input should be a valid integer"),)


def test_output_model_instances() -> None:
    instance = Counted(count=2)
    value, failure = validate_output("t", schema_of(Counted), instance)
    assert failure is None
    assert value is instance

    value, failure = validate_output("t", schema_of(Counted), OtherCounted(count=4))
    assert failure is None
    assert value == Counted(count=4)

    failure = failure_of(validate_output("t", schema_of(Counted), Named(name="n")))
    assert failure.message == (
        "Tool output validation failed for t. The tool returned invalid output:\n"
        + "- count: Field required\n\n"
        + 'Returned output: {\n  "name": "n"\n}'
    )


def test_output_model_instance_against_json_schema() -> None:
    schema = schema_of({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]})
    value, failure = validate_output("t", schema, Counted(count=1))
    assert failure is None
    assert value == {"count": 1}


def test_suspend_payload_failure_message() -> None:
    failure = failure_of(validate_suspend_payload("approve", schema_of(Reason), {"reason": None}))
    assert failure.message == (
        "Tool suspension data validation failed for approve. "
        + "Please fix the following errors and try again:\n"
        + "- reason: Input should be a valid string\n\n"
        + 'Provided arguments: {\n  "reason": null\n}'
    )


def test_suspend_payload_success() -> None:
    value, failure = validate_suspend_payload("approve", schema_of(Reason), {"reason": "why"})
    assert failure is None
    assert value == Reason(reason="why")


@pytest.mark.parametrize("falsy", [False, 0])
def test_resume_data_falsy_against_string_root_model_fails(falsy: object) -> None:
    failure = failure_of(validate_resume_data("approve", schema_of(Text), falsy))
    assert failure.message == (
        INPUT_HEADER.format("approve")
        + "- root: Input should be a valid string\n\n"
        + f"Provided arguments: {'false' if falsy is False else '0'}"
    )


def test_resume_data_false_against_json_string_schema_fails() -> None:
    failure = failure_of(validate_resume_data("approve", schema_of({"type": "string"}), False))
    assert failure.message == (
        INPUT_HEADER.format("approve") + "- root: False is not of type 'string'\n\n" + "Provided arguments: false"
    )


def test_resume_data_none_is_not_normalised() -> None:
    failure = failure_of(validate_resume_data("approve", schema_of(Defaults), None))
    assert failure.issues == (Issue((), "Input should be a valid dictionary or instance of Defaults"),)
    assert failure.message.endswith("\n\nProvided arguments: null")


def test_none_schema_passes_value_through() -> None:
    marker = {"anything": [1, None]}
    for validate in (validate_input, validate_output, validate_suspend_payload, validate_resume_data):
        value, failure = validate("t", None, marker)
        assert value is marker
        assert failure is None
    assert validate_input("t", None, None) == (None, None)


def test_to_result_shape() -> None:
    failure = ValidationFailure(
        message="boom",
        issues=(
            Issue((), "Input should be an object"),
            Issue(("a", "b"), "Field required"),
            Issue(("items", 0, "name"), "Input should be a valid string"),
            Issue(("a", "b"), "Second problem"),
        ),
    )
    assert failure.to_result() == {
        "error": True,
        "message": "boom",
        "validationErrors": {
            "errors": ["Input should be an object"],
            "fields": {
                "a.b": {"errors": ["Field required", "Second problem"]},
                "items.0.name": {"errors": ["Input should be a valid string"]},
            },
        },
    }


def test_to_result_from_real_failure() -> None:
    failure = failure_of(validate_input("shop", schema_of(Basket), {"items": [{}]}))
    result = failure.to_result()
    assert result == {
        "error": True,
        "message": failure.message,
        "validationErrors": {"errors": [], "fields": {"items.0.name": {"errors": ["Field required"]}}},
    }
    assert is_validation_result(result) is True


def test_is_validation_result() -> None:
    assert is_validation_result({"error": True, "message": "m", "validationErrors": {}}) is True
    assert is_validation_result({"error": 1, "message": "m", "validationErrors": {}}) is False
    assert is_validation_result({"error": True, "message": None, "validationErrors": {}}) is False
    assert is_validation_result({"error": True, "message": "m"}) is False
    assert is_validation_result([True, "m", {}]) is False


def test_async_schema_is_rejected() -> None:
    async def check(value: object) -> bool:
        return True

    with pytest.raises(ConfigurationError) as caught:
        to_schema(check)  # type: ignore[arg-type]
    assert str(caught.value) == "Your schema is async, which is not supported. Please use a sync schema."


def test_async_callable_object_is_rejected() -> None:
    class Checker:
        async def __call__(self, value: object) -> bool:
            return True

    with pytest.raises(ConfigurationError) as caught:
        to_schema(Checker())  # type: ignore[arg-type]
    assert str(caught.value) == "Your schema is async, which is not supported. Please use a sync schema."


def test_model_with_async_validator_is_rejected() -> None:
    class Slow(BaseModel):
        name: str

        @field_validator("name")
        @classmethod
        async def check(cls, value: str) -> str:
            return value

    class Wrapper(BaseModel):
        inner: list[Slow]

    for source in (Slow, Wrapper):
        with pytest.raises(ConfigurationError) as caught:
            to_schema(source)
        assert str(caught.value) == "Your schema is async, which is not supported. Please use a sync schema."


def test_non_schema_sources_are_rejected() -> None:
    class Plain:
        pass

    with pytest.raises(ConfigurationError) as caught:
        to_schema(Plain)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "Invalid schema 'test_non_schema_sources_are_rejected.<locals>.Plain': "
        "expected a pydantic BaseModel subclass or a JSON-schema dict."
    )
    with pytest.raises(ConfigurationError, match=r"^Invalid schema: got an instance of Named; pass"):
        to_schema(Named(name="x"))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^Invalid JSON schema: 'strung' is not valid"):
        to_schema({"type": "strung"})


def test_to_schema_passthrough() -> None:
    schema = Schema(Named)
    assert to_schema(schema) is schema
    assert to_schema(None) is None
    assert schema.source is Named


def test_schema_introspection() -> None:
    assert schema_of(Numbers).is_array() is True
    assert schema_of(Named).is_array() is False
    assert schema_of({"type": "array"}).is_array() is True
    assert schema_of({"type": ["array", "null"]}).is_array() is True
    assert schema_of({"type": "object"}).is_array() is False
    assert schema_of(Prompted).has_property("prompt") is True
    assert schema_of(Prompted).has_property("query") is False
    assert schema_of(Aliased).has_property("prompt") is True
    assert schema_of(Aliased).has_property("user_prompt") is False
    assert schema_of({"properties": {"prompt": {}}}).has_property("prompt") is True
    assert schema_of(Numbers).has_property("prompt") is False


def test_recursive_model_properties_resolved_through_ref() -> None:
    schema = schema_of(Node)
    assert "$ref" in schema.json_schema()
    assert schema.has_property("prompt") is True
    value, failure = validate_input("t", schema, {"query": "root"})
    assert failure is None
    assert value == Node(prompt="root")


def test_json_schema_accessor() -> None:
    source = {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert schema_of(source).json_schema() is source
    assert schema_of(Named).json_schema() == {
        "properties": {"name": {"title": "Name", "type": "string"}},
        "required": ["name"],
        "title": "Named",
        "type": "object",
    }


def test_the_earlier_private_module_name_still_imports() -> None:
    """``tempo_agents.tools.validation`` was ``tools._validation``: code that imported the old name keeps working."""
    from tempo_agents.tools import _validation, validation

    assert _validation.__all__ == validation.__all__
    assert all(getattr(_validation, name) is getattr(validation, name) for name in validation.__all__)
