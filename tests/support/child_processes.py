"""Commands for child processes that die with this one, started without Python code between fork and exec.

A test process runs many threads (the Temporal SDK's, the stores' writer threads, the event loop's executors). A
``preexec_fn`` runs Python in the forked child of such a process before exec, which Python's documentation calls
unsafe: a lock another thread held at the fork stays held in the child. The suite's PostgreSQL server, started
lazily in the middle of the suite, loaded the C library there with ``ctypes`` to ask for a parent-death signal, and
once its ``initdb`` "died with SIGABRT" without a word of output: most likely in that window, before exec.
util-linux's ``setpriv`` (always installed on Debian) sets the parent-death signal, and the user to run as, in its
own process, then executes the command in place: the child's pid is the command's.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["dying_with_this_process"]


def dying_with_this_process(
    command: Sequence[str], *, signal: str = "KILL", user: tuple[int, int] | None = None
) -> list[str]:
    """``command``, to run as it is but receive ``signal`` (``KILL``, ``QUIT``, ...) when the thread that starts it
    ends (in practice this process: it is started from the main thread), as ``user`` (uid, gid; no supplementary
    groups) when given. The signal is set after the change of user, which would clear it."""
    prefix = ["setpriv", "--pdeathsig", signal]
    if user is not None:
        uid, gid = user
        prefix += ["--regid", str(gid), "--reuid", str(uid), "--clear-groups"]
    return [*prefix, "--", *command]
