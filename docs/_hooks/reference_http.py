"""The HTTP API reference page, from the OpenAPI document the server itself serves at ``/openapi.json``."""

from __future__ import annotations

import json
from typing import Any

from tempo_agents import App
from tempo_agents.server import create_server

__all__ = ["http_reference", "openapi_document"]

METHODS = ("get", "post", "put", "patch", "delete")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of a server with no agents (the routes do not depend on them)."""
    document: dict[str, Any] = create_server(App(agents=[])).openapi()
    return document


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _schema_name(schema: dict[str, Any]) -> str:
    """A schema as a link to its section, or its type."""
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return f"[`{name}`](#schema-{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_schema_name(option) for option in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {_schema_name(schema.get('items', {}))}"
    return f"`{schema.get('type', 'any')}`"


def _parameters(operation: dict[str, Any]) -> list[str]:
    parameters = operation.get("parameters", [])
    if not parameters:
        return []
    rows = ["| parameter | in | type | required | description |", "| --- | --- | --- | --- | --- |"]
    for parameter in parameters:
        schema = parameter.get("schema", {})
        rows.append(
            f"| `{parameter['name']}` | {parameter['in']} | {_schema_name(schema)} | "
            f"{'yes' if parameter.get('required') else 'no'} | {_cell(parameter.get('description', ''))} |"
        )
    return [*rows, ""]


def _body_and_responses(operation: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines.append(f"Request body (`{media}`): {_schema_name(content.get('schema', {}))}\n")
    rows = ["| status | answer |", "| --- | --- |"]
    for status, response in operation.get("responses", {}).items():
        kinds = ", ".join(
            f"`{media}` {_schema_name(content.get('schema', {}))}".strip()
            for media, content in response.get("content", {}).items()
        )
        rows.append(f"| {status} | {_cell(response.get('description', ''))}{'; ' + kinds if kinds else ''} |")
    return [*lines, *rows, ""]


def _operation(method: str, path: str, operation: dict[str, Any]) -> str:
    lines = [f"### `{method.upper()} {path}`\n"]
    if operation.get("summary"):
        lines.append(f"{operation['summary']}\n")
    if operation.get("description"):
        lines.append(f"{operation['description']}\n")
    return "\n".join([*lines, *_parameters(operation), *_body_and_responses(operation)])


def _schemas(document: dict[str, Any]) -> list[str]:
    sections = ["## Schemas\n"]
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        sections.append(f"### {name} {{#schema-{name.lower()}}}\n\n```json\n{json.dumps(schema, indent=2)}\n```\n")
    return sections


def http_reference() -> str:
    """The Markdown of the HTTP API reference page."""
    document = openapi_document()
    parts = [
        "# HTTP API reference\n",
        f"{document['info'].get('summary', '')} Generated when the site is built from the OpenAPI document "
        "the server serves at `/openapi.json` (every route under `/api` by default, the prefix of "
        "`create_server(app, prefix=...)`). How to serve it, authenticate and what the errors mean: "
        "[Serve the HTTP API](../how-to/http-api.md).\n",
    ]
    by_tag: dict[str, list[str]] = {}
    for path, operations in document["paths"].items():
        for method in METHODS:
            if method in operations:
                tag = (operations[method].get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append(_operation(method, path, operations[method]))
    for tag, operations_text in by_tag.items():
        parts.append(f"## {tag}\n")
        parts += operations_text
    return "\n".join(parts + _schemas(document))
