"""Benchmarks: scripts that print figures and ratios against a bare-Temporal baseline (see README.md)."""
