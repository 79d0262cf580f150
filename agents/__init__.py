"""The team's domain: roles, their inputs and outputs, the Manager's workflow.

Depends on nothing but its own small protocols (``agents.protocols``); ``bot/`` implements them.
"""
