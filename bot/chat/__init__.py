"""What a run looks like in a chat thread, the same on every platform; adapters only translate it."""
