"""The documentation site: built with ``mkdocs build --strict``, walked page by page, its examples run."""
