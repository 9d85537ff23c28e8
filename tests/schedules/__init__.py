"""Schedules: runs started by Temporal Schedules (trigger, pause, backfill; from Python, HTTP, the CLI and the
dashboard's schedules page), and runs started by webhooks."""
