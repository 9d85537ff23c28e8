"""One-click answer links: signed, expiring capabilities that answer one round of one waiting call.

:class:`AnswerLinks` makes them (``links(...)`` gives the dashboard URL and one URL per choice) and checks them
(``verify``); the HTTP server's ``/answer-links/`` routes show a confirmation page (GET) and answer (POST).
"""

from tempo_agents.approvals.answer_links.choices import Choice, approval_choices, call_choices, option_choices
from tempo_agents.approvals.answer_links.signing import AnswerLinks, LinkClaims, LinkRefusedError, args_hash
from tempo_agents.approvals.answer_links.spent import link_spent, record_spent

__all__ = [
    "AnswerLinks",
    "Choice",
    "LinkClaims",
    "LinkRefusedError",
    "approval_choices",
    "args_hash",
    "call_choices",
    "link_spent",
    "option_choices",
    "record_spent",
]
