"""Steering, interrupting and rolling back a running run: a message delivered into the run's next model step (while
a step streams, while tools run, while the run waits for a person, after it finished, two at once), an interrupt at
the next step boundary (and while waiting), a rollback that takes a run's messages off its thread; also across
SIGKILLed workers."""
