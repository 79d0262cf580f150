"""The application: config, LLM client, store, sandbox, check-in, service and CLI."""
