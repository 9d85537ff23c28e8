"""The tempo-agents command line, connection options, the deploy files."""
