"""``run_program``, as the shell that starts a program sees it: the exit status Python would give, and everything
Python does at exit still done (other threads waited for, ``atexit`` handlers, buffered output). The example
programs, which end with it, run on the dev server in ``tests/docs/test_examples.py``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, timeout=90)


@pytest.mark.parametrize(
    ("ending", "status", "stderr"),
    [
        ("return None", 0, ""),
        ("raise SystemExit(3)", 3, ""),
        ("raise SystemExit('no config found')", 1, "no config found"),
        ("raise ValueError('bad input')", 1, "ValueError: bad input"),
        ("raise KeyboardInterrupt", 130, ""),
    ],
)
def test_the_exit_status_is_the_one_python_gives(tmp_path: Path, ending: str, status: int, stderr: str) -> None:
    done = _run(
        tmp_path,
        f"""
        from tempo_agents import run_program

        async def main() -> None:
            print("ran", end="")  # buffered: no newline, stdout is a pipe
            {ending}

        run_program(main())
        print("never printed")
        """,
    )
    assert done.returncode == status, done.stderr
    assert done.stdout == "ran"
    assert stderr in done.stderr
    if status == 1 and "ValueError" in stderr:
        assert "Traceback" in done.stderr


def test_what_python_does_at_exit_is_still_done(tmp_path: Path) -> None:
    """A thread still working when ``main`` returns is waited for, ``atexit`` handlers run (in their order), and
    what the program wrote with ``print`` and ``logging`` reaches its pipes."""
    done = _run(
        tmp_path,
        """
        import atexit
        import logging
        import sys
        import threading
        import time

        from tempo_agents import run_program

        logging.basicConfig(stream=sys.stderr, format="%(message)s", level=logging.INFO)
        atexit.register(print, "second handler")
        atexit.register(print, "first handler")

        def slow() -> None:
            time.sleep(0.5)
            print("thread done")

        async def main() -> None:
            threading.Thread(target=slow).start()
            logging.getLogger("program").info("logged")

        run_program(main())
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["thread done", "first handler", "second handler"]
    assert done.stderr.strip() == "logged"
