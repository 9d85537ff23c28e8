"""Notifications: a run's events delivered durably to real receivers on 127.0.0.1 (a signature-verifying HTTP
server that fails, is down or hangs; Slack-compatible webhooks; a real SMTP server), exactly once per id after
retries and across a SIGKILLed worker, in order per run; reminders and escalation over days of skipped time;
signatures forged or expired refused; no secret in events, logs or the journal."""
