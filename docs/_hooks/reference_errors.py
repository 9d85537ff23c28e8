"""The error codes page: the code of every exception the package raises on purpose, the codes of refused
resumes with the HTTP status each is answered with, and every other code the package's source passes."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import tempo_agents
from tempo_agents import errors
from tempo_agents.server.errors import TEMPORAL_UNAVAILABLE, resume_error_status
from tempo_agents.workflows import resume_errors

__all__ = ["error_classes", "error_codes_reference", "source_codes"]

PACKAGE = Path(tempo_agents.__file__).parent


def error_classes() -> list[type[errors.TempoAgentsError]]:
    """Every exception class of ``tempo_agents.errors`` and of the package's public names."""
    found: dict[str, type[errors.TempoAgentsError]] = {}
    candidates = [getattr(errors, name) for name in errors.__all__]
    candidates += [getattr(tempo_agents, name) for name in tempo_agents.__all__]
    for candidate in candidates:
        if inspect.isclass(candidate) and issubclass(candidate, errors.TempoAgentsError):
            found[candidate.__name__] = candidate
    return sorted(found.values(), key=lambda cls: cls.__name__)


def _codes_in(tree: ast.AST) -> set[str]:
    codes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "code" and isinstance(node.value, ast.Constant):
            codes.add(str(node.value.value))
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "code" and isinstance(value, ast.Constant):
                    codes.add(str(value.value))
    return codes


def source_codes() -> dict[str, list[str]]:
    """Each code passed as ``code="..."`` or ``{"code": "..."}`` in the package, and the modules passing it."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(("tempo_agents", *path.relative_to(PACKAGE).with_suffix("").parts))
        for code in _codes_in(ast.parse(path.read_text())):
            found.setdefault(code, []).append(module.removesuffix(".__init__"))
    return found


def _first_line(cls: type) -> str:
    return (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")


def error_codes_reference() -> str:
    """The Markdown of the error codes page."""
    lines = [
        "# Error codes\n",
        "Every error tempo-agents raises on purpose carries a stable `code`: branch on it, not on the message. "
        'The HTTP API answers errors as JSON `{"error": "..."}`, with `code` where one applies '
        "([Serve the HTTP API](../how-to/http-api.md) says which status each kind of failure gets). "
        "This page is generated from the code when the site is built.\n",
        "## Exceptions\n",
        "| exception | `code` | raised when |",
        "| --- | --- | --- |",
    ]
    for cls in error_classes():
        lines.append(
            f"| [`{cls.__name__}`](python-api.md#tempo_agents.{cls.__name__}) | `{cls.code}` | {_first_line(cls)} |"
        )
    lines += [
        "",
        "## Refused resumes\n",
        "A resume, approval or decline the run refuses raises `ResumeError` with one of these codes; over HTTP it is "
        "answered with the status beside it.\n",
        "| code | HTTP status |",
        "| --- | --- |",
    ]
    for name in sorted(name for name in resume_errors.__all__ if isinstance(getattr(resume_errors, name), str)):
        code = getattr(resume_errors, name)
        lines.append(f"| `{code}` | {resume_error_status(code)} |")
    lines += [
        "",
        "## HTTP only\n",
        "| code | answer |",
        "| --- | --- |",
        f"| `{TEMPORAL_UNAVAILABLE}` | 503 with `Retry-After`: Temporal is down, overloaded or slower than the "
        "call's deadline; a retry may cure it |",
        "",
        "## Every other code\n",
        "Codes the package passes where it raises or answers an error, and the modules that do.\n",
        "| code | where |",
        "| --- | --- |",
    ]
    known = {cls.code for cls in error_classes()}
    for code, modules in sorted(source_codes().items()):
        if code not in known:
            lines.append(f"| `{code}` | {', '.join(f'`{module}`' for module in modules)} |")
    return "\n".join(lines) + "\n"
