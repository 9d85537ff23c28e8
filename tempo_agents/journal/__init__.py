"""The run journal: chunk models, their constructors, identity keys, the workflow's outbox, writer and reader."""

__all__: list[str] = []
