"""Crash recovery, worker and server loss, chaos, step reset, replay of committed histories, the sandbox;
the journal's segments and what workflow code imports; runs left waiting by the previous release finished by this
one."""
