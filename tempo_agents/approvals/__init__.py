"""Approvals: which calls need a person's yes, who may give it, and one-click answer links.

- :class:`ApprovalRequest` (``policy``): what a tool's approval asks, as the agent defines it;
- :class:`ApproverPolicy` and :class:`Approvers` (``approvers``): who a waiting call is assigned to;
- :func:`members_by_group` and :func:`people_of` (``group_members``): the people a call's approvers name;
- :func:`may_answer` (``who_may_answer``): the one check of an answerer, made by the client and by the workflow;
- :class:`AnswerLinks` (``answer_links``): signed, single-use links that answer one round of one call, and the
  store's record of a spent link (``link_spent``, ``record_spent``).
"""

from tempo_agents.approvals.answer_links import (
    AnswerLinks,
    Choice,
    LinkClaims,
    LinkRefusedError,
    approval_choices,
    args_hash,
    call_choices,
    link_spent,
    option_choices,
    record_spent,
)
from tempo_agents.approvals.approvers import ApproverPolicy, Approvers
from tempo_agents.approvals.group_members import members_by_group, people_of
from tempo_agents.approvals.policy import ApprovalPolicy, ApprovalRequest
from tempo_agents.approvals.who_may_answer import may_answer, not_an_approver_text

__all__ = [
    "AnswerLinks",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApproverPolicy",
    "Approvers",
    "Choice",
    "LinkClaims",
    "LinkRefusedError",
    "approval_choices",
    "args_hash",
    "call_choices",
    "link_spent",
    "may_answer",
    "members_by_group",
    "not_an_approver_text",
    "option_choices",
    "people_of",
    "record_spent",
]
