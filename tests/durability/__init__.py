"""Crash recovery, worker and server loss, chaos, step reset, replay of committed histories, the sandbox."""
