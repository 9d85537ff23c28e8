"""Importing the Python files of an app directory (``config.py``, tool modules) as modules of their own."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from tempo_agents.errors import ConfigurationError

__all__ = ["import_file"]


def import_file(path: Path, app_dir: Path) -> ModuleType:
    """Run ``path`` as a module named after where it lives in the app directory.

    The name is the same on every import of the same file (``tempo_agents_app_<hash>.agents.shop.tools.stock``
    spelled with ``__`` for dots), so pydantic models and dataclasses defined in it resolve their annotations; a
    second import of the file (a client and a worker in one process) runs it again under that name.
    """
    relative = path.resolve().relative_to(app_dir.resolve()).with_suffix("")
    digest = hashlib.sha256(str(app_dir.resolve()).encode()).hexdigest()[:8]
    name = "__".join([f"tempo_agents_app_{digest}", *(re.sub(r"\W", "_", part) for part in relative.parts)])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        shown = path.resolve().relative_to(app_dir.resolve()).as_posix()
        raise ConfigurationError(f"importing {shown} failed: {type(error).__name__}: {error}") from error
    return module
