"""Schedules: runs started by Temporal Schedules (trigger, pause, backfill), and runs started by webhooks."""
