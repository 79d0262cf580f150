"""What every built-in language's sandbox run shares: the base environment and where the offline images are."""

from __future__ import annotations

OFFLINE_PREFIX = "codegen-chat-sandbox"  # `sandbox build --offline` tags its images under this name
# Tools write only to /work and /tmp (small tmpfs mounts): the root is read-only.
BASE_ENV = {"HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
