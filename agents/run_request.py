"""``RunRequest``: what the team is handed to start (or continue) a piece of work. It sits above both
``agents.types`` (the values) and ``agents.protocols`` (the workspace it may carry), so neither imports the other
back."""

from __future__ import annotations

from dataclasses import dataclass

from agents.protocols import Workspace
from agents.types import Attachment, PriorWork, ThreadContext


@dataclass(frozen=True)
class RunRequest:
    """Everything the team needs to start (or continue) a piece of work."""

    task: str
    run_id: str
    attachments: tuple[Attachment, ...] = ()
    prior: PriorWork | None = None
    conversation_key: str = ""  # which conversation the run belongs to (a Gist is revised per conversation)
    workspace: Workspace | None = None  # the repository the run works in, if the request names one
    thread: ThreadContext | None = None  # the thread the request was made in, when the bot read it
    # the task as the person asked it, when ``task`` tells the team more (a resumed run's first line): what the
    # run's commits and pull request are named after
    asked: str = ""

    @property
    def as_asked(self) -> str:
        return self.asked or self.task

    @property
    def context(self) -> ThreadContext | None:
        """The thread this request continues: read for it, else what the conversation's first run read."""
        return self.thread or (self.prior.thread if self.prior else None)
