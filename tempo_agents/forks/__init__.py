"""Forks of runs: a new run that starts from another's transcript at a step (its origin), and comparing two runs."""
