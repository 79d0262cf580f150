"""The terminal: a task on the command line, each agent's turn streamed to stdout, files to a folder.

    run       codegen-chat run: the request, the run, the files saved, the exit status
    render    a run's events as terminal lines (turns, tests, the summary), inert and masked
    history   codegen-chat history: runs and transcripts from the store
"""

from adapters.terminal.history import print_run, print_runs
from adapters.terminal.render import Renderer
from adapters.terminal.run import PLATFORM, TerminalRun, check_out_dir, read_attachments, run_in_terminal

__all__ = ["PLATFORM", "Renderer", "TerminalRun", "check_out_dir", "print_run", "print_runs", "read_attachments",
           "run_in_terminal"]
