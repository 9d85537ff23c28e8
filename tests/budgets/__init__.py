"""Budgets: the price table's costs, limits reached mid-run under each policy (finish, wait for a person), usage
counted once per step across a SIGKILLed worker and a restarted dev server, UTC day and month limits across a
period boundary on a time-skipping server, and two worker processes racing on one resource in PostgreSQL."""
