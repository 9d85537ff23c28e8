"""Deprecated alias of :mod:`tempo_agents.tools.validation` (the module's earlier, private name)."""

from tempo_agents.tools.validation import *  # noqa: F403
from tempo_agents.tools.validation import __all__ as __all__
