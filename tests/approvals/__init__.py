"""Approvals addressed to people: who may answer a waiting call (principals, groups from tokens files, approver
policies) enforced by the run for every client (Python, HTTP, the ``temporal`` CLI, signals); the inbox's "waiting
for me" order; signed one-click answer links (forged, replayed, expired, cross-call and cross-round links refused, a
GET that changes nothing, the link's principal recorded, no secret in the journal or the logs); edit-then-approve
(the tool runs with exactly the approved arguments, the model sees them, the journal records who changed what,
schema-invalid edits refused, the dashboard's diff in Chromium)."""
