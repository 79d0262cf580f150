"""Configuration: ``sections`` declares every table of ``config.toml`` as frozen dataclasses and reads them with
the secrets from the environment; ``settings`` is the strict TOML-to-dataclass reader they are declared with."""
