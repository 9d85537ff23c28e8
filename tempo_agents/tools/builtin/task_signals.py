"""Deprecated alias: the task signals' earlier import path. They live in :mod:`tempo_agents.tasks.signals`."""

from tempo_agents.tasks.signals import *  # noqa: F403
from tempo_agents.tasks.signals import __all__ as __all__
