"""Persistence: the SQLite store (``sqlite``), what it may be read back as (``history``), its errors as the
project's own (``errors``) and what doctor says of it (``doctor``)."""
