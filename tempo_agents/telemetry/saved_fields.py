"""Fields telemetry adds to what the activities save in the store."""

SUSPENDED_AT_FIELD = "suspendedAt"
"""The field of a suspended call's saved outcome that holds when it suspended (Unix seconds)."""
