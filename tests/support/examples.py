"""The example apps in ``examples/``, imported once each by path (``examples`` is no package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_module(filename: str) -> ModuleType:
    """``examples/<filename>`` as a module, imported on first use and shared afterwards."""
    name = Path(filename).stem
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / filename)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
