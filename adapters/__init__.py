"""Platform adapters: translate a platform's input into core requests and core events into replies."""
