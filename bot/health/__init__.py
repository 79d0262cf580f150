"""Is the bot well: ``/healthz`` and ``/readyz`` (``checks``, ``http``) and ``codegen-chat doctor``
(``doctor``, ``doctor_types``)."""
