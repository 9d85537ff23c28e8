"""Agent runs end to end: chunks, suspension, approval and resume, deadlines, hooks, local activities."""
