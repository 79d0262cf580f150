"""The ``codegen-chat`` program (``python -m codegen_chat`` too): the command line's modules loaded with the cyclic
garbage collector paused, then ``codegen_chat.cli`` run.

Loading them makes some hundred thousand objects (classes, the SDK's models, the config's dataclasses) that live as
long as the process: the collector's passes over them while they load found nothing to free and were a tenth of
start-up. Once they are loaded, ``cli`` leaves them out of its passes for good (``gc.freeze``). The one module
here that imports inside a function, so that the pause covers every import of the command line.
"""

from __future__ import annotations

import gc


def main() -> int:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        from codegen_chat import cli
    finally:
        if was_enabled:
            gc.enable()
    return cli.main()


if __name__ == "__main__":
    raise SystemExit(main())
