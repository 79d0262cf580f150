"""Persistence behind one protocol (``protocol``): SQLite on one machine (``sqlite``), PostgreSQL for replicas
(``postgres``, its schema in ``migrations``), chosen in ``open``; rows read back by ``rows``, errors as the
project's own (``errors``) and what doctor says of it (``doctor``)."""
