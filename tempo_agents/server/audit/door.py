"""The changing routes by path, for a request refused at the door (``request_limits.py``: a body too large, 413, or
nested too deeply, 400) before any route was matched: the route it would have reached, so that its refusal is
recorded as that route's action. The table is made once, when the server is made, from the routers it includes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from fastapi.routing import APIRoute
from starlette.convertors import Convertor
from starlette.routing import compile_path
from starlette.types import Scope

from tempo_agents.server.audit.actions import action_of

__all__ = ["STATE_NAME", "DoorRoute", "door_route", "door_routes"]

STATE_NAME = "audit_door_routes"
"""Where the server keeps the table (``app.state``)."""


@dataclass(frozen=True)
class DoorRoute:
    """A changing route's methods, full path pattern and endpoint."""

    methods: frozenset[str]
    pattern: re.Pattern[str]
    convertors: Mapping[str, Convertor[Any]]
    endpoint: Callable[..., Any]


def door_routes(prefix: str, routers: Iterable[APIRouter]) -> list[DoorRoute]:
    """The routes of ``routers``, included under ``prefix``, that record an action."""
    found: list[DoorRoute] = []
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute) and action_of(route.endpoint) is not None:
                pattern, _, convertors = compile_path(prefix + route.path)
                found.append(DoorRoute(frozenset(route.methods or ()), pattern, convertors, route.endpoint))
    return found


def door_route(scope: Scope) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """The endpoint and path parameters of the changing route the request names (``None``: none)."""
    table: list[DoorRoute] = getattr(scope["app"].state, STATE_NAME, [])
    for route in table:
        matched = route.pattern.match(scope.get("path", ""))
        if matched is not None and scope.get("method") in route.methods:
            found = matched.groupdict()
            return route.endpoint, {name: route.convertors[name].convert(value) for name, value in found.items()}
    return None, {}
