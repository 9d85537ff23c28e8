"""Forks of runs: a new run from another's transcript at a step, tools reused or run again, retries of failed runs,
the original left unchanged, lineage, and comparing two runs; from Python, HTTP, the CLI and the dashboard."""
