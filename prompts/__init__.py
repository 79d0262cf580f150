"""Prompt templates, one per role, rendered with Jinja's StrictUndefined (see agents/prompts.py)."""
