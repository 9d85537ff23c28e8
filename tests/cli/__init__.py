"""The tempo-agents command line and its connection options."""
