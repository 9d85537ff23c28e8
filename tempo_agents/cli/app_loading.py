"""Finding the App a command serves (``--app module:attr``), applying ``--store``/``--task-queue``, connecting it."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import os
import sys
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tempo_agents.budgets import PriceTable
from tempo_agents.cli._console import CliError, one_line
from tempo_agents.client.app import App
from tempo_agents.encryption import keyring_from_file
from tempo_agents.errors import ConfigurationError
from tempo_agents.notifications import load_notification_settings

__all__ = ["configure_app", "connect", "is_app_directory", "load_app", "use_keys_file"]

if TYPE_CHECKING:
    from temporalio.service import TLSConfig


def load_app(spec: str) -> App:
    """Import the App that ``module:attr`` names (``attr`` defaults to ``app``).

    The module is importable from the current directory too; ``path/to/file.py:attr`` loads a
    file. ``attr`` may also name a function that returns an App. A directory (``path/``, or a directory that is
    not a Python package) is an app directory of file-based agents: ``App.from_directory(path)``.
    """
    if is_app_directory(spec):
        return _load_directory(spec)
    module_name, _, attr = spec.partition(":")
    attr = attr or "app"
    if not module_name:
        raise CliError(f"--app {spec!r}: give it as module:attribute, e.g. myproject.agents:app", 2)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    module = _import_app_module(spec, module_name)
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CliError(f"--app {spec}: module '{module.__name__}' has no attribute '{attr}'", 2) from None
    if inspect.isfunction(value):
        try:
            value = value()
        except Exception as error:
            raise CliError(f"--app {spec}: calling {attr}() failed: {one_line(error)}", 2) from error
    if not isinstance(value, App):
        raise CliError(f"--app {spec}: '{attr}' is a {type(value).__name__}, not a tempo_agents.App", 2)
    return value


def is_app_directory(spec: str) -> bool:
    """Whether ``--app`` names an app directory rather than a module."""
    path = Path(spec)
    if not path.is_dir():
        return False
    return spec.endswith(("/", os.sep)) or not (path / "__init__.py").exists()


def _load_directory(spec: str) -> App:
    try:
        return App.from_directory(spec)
    except ConfigurationError as error:
        raise CliError(f"--app {spec}: {one_line(error.message)}", 2) from error


def _import_app_module(spec: str, module_name: str) -> ModuleType:
    if module_name.endswith(".py") or os.sep in module_name or "/" in module_name:
        return _import_file(Path(module_name), f"--app {spec}")
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise CliError(
                f"--app {spec}: no module named '{missing}' (looked in the current directory and on sys.path)", 2
            ) from None
        raise CliError(f"--app {spec}: importing '{module_name}' failed: {one_line(error)}", 2) from error
    except Exception as error:
        raise CliError(f"--app {spec}: importing '{module_name}' failed: {one_line(error)}", 2) from error


def _import_file(path: Path, what: str) -> ModuleType:
    """Import a Python file as a module named after it; errors name ``what`` (e.g. ``--app x.py:app``)."""
    if not path.is_file():
        raise CliError(f"{what}: no file {path}", 2)
    name = path.stem
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise CliError(f"{what}: cannot import {path}", 2)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise CliError(f"{what}: importing {path} failed: {one_line(error)}", 2) from error
    return module


def configure_app(
    app: App,
    *,
    store: str | None = None,
    task_queue: str | None = None,
    prices: str | None = None,
    notifications: str | None = None,
) -> App:
    """Apply ``--store``, ``--task-queue``, ``--prices`` and ``--notifications`` to a loaded App."""
    if task_queue:
        app.task_queue = task_queue
    if prices:
        try:
            app.registry.prices = PriceTable.from_file(prices)
        except ConfigurationError as error:
            raise CliError(f"--prices: {error.message}", 2) from error
    if notifications:
        try:
            app.registry.use_notifications(load_notification_settings(notifications))
        except ConfigurationError as error:
            raise CliError(f"--notifications: {error.message}", 2) from error
    if store:
        try:
            app.registry.use_store(store)
        except ConfigurationError as error:
            raise CliError(f"--store: {error.message}", 2) from error
    return app


async def connect(
    app: App,
    address: str,
    namespace: str,
    *,
    tls: bool | TLSConfig | None = None,
    api_key: str | None = None,
    encryption_keys: str | None = None,
) -> None:
    """Connect the App to Temporal (``tls``/``api_key``: see :meth:`App.connect`), checking that the server answers
    and the namespace exists; ``encryption_keys``, a keys file whose keys seal the runs' payloads (over the App's)."""
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
    from temporalio.service import RPCError, RPCStatusCode

    use_keys_file(app, encryption_keys)
    try:
        client = await asyncio.wait_for(app.connect(address, namespace=namespace, tls=tls, api_key=api_key), 15)
    except TimeoutError:
        raise CliError(f"cannot reach Temporal at {address}: no answer within 15 s") from None
    except Exception as error:
        raise CliError(f"cannot reach Temporal at {address}: {_connect_reason(error)}") from None
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=namespace), timeout=timedelta(seconds=10)
        )
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise CliError(f"namespace '{namespace}' does not exist on the Temporal server at {address}") from None
        raise CliError(f"Temporal at {address} refused to describe namespace '{namespace}': {error.message}") from None


def use_keys_file(app: App, path: str | None) -> None:
    """Seal the App's payloads under the keys of ``path`` (``--encryption-keys``); nothing without one."""
    if not path:
        return
    try:
        app.use_encryption(keyring_from_file(path))
    except ConfigurationError as error:
        raise CliError(f"--encryption-keys: {error.message}", 2) from None


def _connect_reason(error: BaseException) -> str:
    text = str(error).removeprefix("Failed client connect: ")
    for marker in ('message: "', "message: '"):
        if marker in text:
            return text.split(marker, 1)[1].split(marker[-1], 1)[0]
    return one_line(text)
