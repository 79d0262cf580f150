"""Pull-request figures, printed (no assertions on time): comments on many pull requests arriving at once.

The real webhook server (``adapters.github.serve``) and service run against the loopback fakes: GitHub (REST and
the webhook sender), a git host serving the repository, the scripted OpenAI-compatible model server, a
scripted sandbox. Each of ``--comments`` collaborators comments ``@codegen-chat`` on a pull request of their
own, all at once. Measured per comment:

- delivery answered: the signed POST sent -> GitHub's answer back (GitHub gives a delivery 10 s);
- seen: the POST sent -> the 👀 reaction on the comment (the permission check and the pull request read first);
- status comment: the POST sent -> the run's status comment on the pull request;
- the whole run: the POST sent -> the final summary (runs queue past ``[limits] max_concurrent_runs``).

Run: python -m benchmarks.github_bench [--comments 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import tempfile
import time
from pathlib import Path

import adapters.github
from bot.config.sections import Config, GitHubConfig, LLMConfig, ReposConfig, RepoSettings, Secrets, StorageConfig
from bot.model.client import OpenAIChatModel
from bot.repos.desk import RepoDesk
from bot.runs.service import Service
from bot.store.sqlite import SQLiteStore
from tests.fakes.git_server import FakeGitHost
from tests.fakes.github_server import Comment, FakeGitHub
from tests.fakes.loopback import free_port, listening
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.team_script import ScriptedSandbox
from tests.github.conftest import FINAL_WORDS, eventually, passing, script_team
from tests.repos.fixtures import PYTHON_PROJECT, git, make_repo

TOKEN, SECRET, REPO = "ghp_bench_0123456789", "bench-secret", "acme/app"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def line(name: str, values: list[float]) -> str:
    p50, p99 = percentile(values, 50) * 1000, percentile(values, 99) * 1000
    return f"{name:<20} p50 {p50:8.1f} ms   p99 {p99:8.1f} ms   max {max(values) * 1000:8.1f} ms"


async def bench(comments: int, folder: Path) -> None:
    (folder / "git").mkdir()
    async with FakeGitHub(token=TOKEN) as github, FakeGitHost(folder / "git", token=TOKEN) as host, \
            FakeOpenAI(models=("gpt-4o-mini",)) as model_server:
        bare = make_repo(host.root, REPO, PYTHON_PROJECT)
        github.add_repo(REPO)
        for n in range(1, comments + 1):
            git("branch", f"feature-{n}", "main", cwd=bare)
            github.add_pull_request(REPO, n, f"feature-{n}")
            github.grant(REPO, f"dev{n}", "write")
        script_team(model_server, runs=comments)
        config = Config(llm=LLMConfig(base_url=model_server.base_url, request_timeout_s=30.0, max_retries=2),
                        storage=StorageConfig(path=str(folder / "bench.sqlite3")),
                        github=GitHubConfig(enabled=True, host="127.0.0.1", port=free_port(), update_interval_s=1.0),
                        repos=ReposConfig(git_url=host.url, allowed={REPO: RepoSettings()}))
        config = dataclasses.replace(config, checkin=dataclasses.replace(config.checkin, github_api_url=github.url,
                                                                         write_interval_s=0))
        secrets = Secrets(openai_api_key="sk-bench-0123456789", github_token=TOKEN, github_webhook_secret=SECRET)
        store = await SQLiteStore.open(config.db_path())
        model = OpenAIChatModel(config, secrets)
        service = Service(config, store, model, ScriptedSandbox(verdict=passing), repos=RepoDesk(config, TOKEN))
        serving = asyncio.create_task(adapters.github.serve(service, config, secrets))
        try:
            await listening(config.github.port, serving)
            await measure(github, f"http://127.0.0.1:{config.github.port}{config.github.path}", comments)
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            await model.close()
            await store.close()


async def measure(github: FakeGitHub, url: str, comments: int) -> None:
    asked = [github.add_issue_comment(REPO, n, f"dev{n}", "@codegen-chat add retries to billing/client.py")
             for n in range(1, comments + 1)]
    sent: dict[int, float] = {}
    answered: list[float] = []

    async def deliver(comment: Comment) -> None:
        sent[comment.number] = time.monotonic()
        status, _ = await github.send_webhook(url, *github.comment_payload(comment), SECRET)
        answered.append(time.monotonic() - sent[comment.number])
        assert status == 202, status

    started = time.monotonic()
    await asyncio.gather(*(deliver(c) for c in asked))

    def said(number: int) -> list[Comment]:
        return [c for c in github.conversation(REPO, number) if c.login != f"dev{number}"]

    await eventually(lambda: all(any(c.body.startswith(FINAL_WORDS) for c in said(n)) for n in sent), within=600)
    total = time.monotonic() - started
    seen = [c.reacted_at - sent[c.number] for c in asked]
    status = [said(n)[0].at - sent[n] for n in sent]
    done = [next(c for c in said(n) if c.body.startswith(FINAL_WORDS)).at - sent[n] for n in sent]
    passed = sum(any(c.body.startswith("✅ Passed:") for c in said(n)) for n in sent)
    print(f"\n{comments} comments on {comments} pull requests at once: one process, scripted model and sandbox")
    print(f"runs passed: {passed}/{comments}; all done in {total:.1f} s; pull requests opened: {len(github.opened)}")
    print(line("delivery answered", answered))
    print(line("seen (👀)", seen))
    print(line("status comment", status))
    print(line("whole run (queued)", done))
    print(f"REST calls: {len(github.requests)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comments", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(bench(args.comments, Path(folder)))


if __name__ == "__main__":
    main()
