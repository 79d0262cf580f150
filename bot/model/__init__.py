"""The model client: any OpenAI-compatible endpoint (``client``), how many requests it takes at once
(``endpoint_gate``), how large its context window is (``context_window``), a watched wrapper for health and
eval (``watched``), and how long a server asked us to wait (``retry_after``)."""
