"""``python -m tempo_agents.cli``: the same as the ``tempo-agents`` console script."""

from tempo_agents.cli.main import main

__all__ = []

if __name__ == "__main__":
    main()
