"""Where the demo keeps its data, and removing what it created."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DemoData"]


@dataclass
class DemoData:
    """Where the demo keeps its data, and what it created there (removed unless --keep-data)."""

    directory: Path
    temporary: bool
    made_directory: bool = False
    created: list[Path] = field(default_factory=list)

    @property
    def db(self) -> Path:
        """The Temporal dev server's database."""
        return self.directory / "temporal.db"

    @property
    def store(self) -> Path:
        """The store's SQLite database (run journals, memory threads)."""
        return self.directory / "store.db"

    def cleanup(self) -> None:
        """Remove what the demo created: a temporary directory whole, else only its own files."""
        if self.temporary:
            shutil.rmtree(self.directory, ignore_errors=True)
            return
        for path in self.created:
            for sibling in _sqlite_files(path):
                with contextlib.suppress(OSError):
                    sibling.unlink()
        if self.made_directory:
            with contextlib.suppress(OSError):
                self.directory.rmdir()  # only when nothing else is in it


def _sqlite_files(path: Path) -> Iterator[Path]:
    """A database file and the files SQLite and the dev server keep beside it."""
    yield path
    for suffix in ("-wal", "-shm", "-journal", ".lock"):
        yield path.with_name(path.name + suffix)
    if path.suffix == ".db":
        yield path.with_suffix(".log")
