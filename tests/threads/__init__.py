"""Threads: at most one active run per memory thread (the thread's workflow), the reject and enqueue strategies, the
queue seen and cancelled, the thread's order, the thread view (Python, HTTP, CLI, dashboard), events on a thread,
races forced from two processes and a worker SIGKILLed while runs are queued."""
