"""The audit trail: every action that changes something, who did it and how it ended, in a hash chain per store.

The store appends and lists records (:meth:`~tempo_agents.store.base.Store.append_audit`); the HTTP server records
each route's action (``server/audit/``); ``tempo-agents audit verify`` walks the chain (:func:`verify_chain`).
"""

from tempo_agents.audit.action import AuditAction
from tempo_agents.audit.chain import GENESIS, chain_after, chain_next, record_hash
from tempo_agents.audit.entry import DONE, FAILED, PENDING, REFUSED, AuditEntry, AuditRecord, Outcome, audit_time
from tempo_agents.audit.query import AuditQuery, parse_audit_time
from tempo_agents.audit.verification import ChainBreak, ChainReader, ChainWalk, read_chain, verify_chain

__all__ = [
    "DONE",
    "FAILED",
    "GENESIS",
    "PENDING",
    "REFUSED",
    "AuditAction",
    "AuditEntry",
    "AuditQuery",
    "AuditRecord",
    "ChainBreak",
    "ChainReader",
    "ChainWalk",
    "Outcome",
    "audit_time",
    "chain_after",
    "chain_next",
    "parse_audit_time",
    "read_chain",
    "record_hash",
    "verify_chain",
]
