"""``codegen-chat`` under cProfile from its first model request to its exit, for ``benchmarks.autogen_bench
--profile``: what a run costs per call, without the imports and setup before the first request.

    python benchmarks/profiled_cli.py OUT.prof run TASK ...
"""

import cProfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.model import client
from codegen_chat import cli

profile = cProfile.Profile()
first_stream = client.OpenAIChatModel.stream


def stream(self, role, messages, temperature=None):  # type: ignore[no-untyped-def]
    client.OpenAIChatModel.stream = first_stream  # once: from the first request on, everything is profiled
    profile.enable()
    return first_stream(self, role, messages, temperature)


client.OpenAIChatModel.stream = stream  # type: ignore[method-assign]
out, sys.argv = sys.argv[1], ["codegen-chat", *sys.argv[2:]]
try:
    code = cli.main()
finally:
    profile.disable()
    profile.dump_stats(out)
sys.exit(code)
