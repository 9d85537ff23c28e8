"""Agent runs end to end: chunks, suspension, approval and resume, deadlines, hooks, local activities;
the decisions a waiting call's answer gets (``WaitingCalls`` alone)."""
