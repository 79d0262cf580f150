"""The Optimizer's review on the pull request (``[github] inline_review``), with real git, real PyGithub and the
GitHub fake computing the pull request's diff from the pushed branch: requests that name a file and line, or
quote a line, land on that line; the others go into the review's body; off by default; a review GitHub refuses
(422) is posted again with every request in its body, and says so in the log."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import pytest
from github import Auth, Github
from github.GithubException import GithubException

from agents.types import RunStatus
from bot.config.sections import GitHubConfig
from bot.repos.inline_review import Request, diff_lines, place, requests, review_body
from tests.fakes.team_script import ScriptedModel
from tests.repos.conftest import TOKEN
from tests.repos.fixtures import PYTHON_PROJECT, make_repo
from tests.repos.test_faults import _config, _passing, _run
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS

TASK = "add retries to the client in acme/billing"
REVIEW = """The retries look right.

1. billing/client.py:5 `return send(request)` returns on the first success; @alice should <b>check</b> it.
2. The check `if attempt == attempts - 1:` could be a for/else.
3. Consider a module docstring.
VERDICT: APPROVE"""


def _team(review: str = REVIEW) -> ScriptedModel:
    return ScriptedModel({"planner": [PLAN], "programmer": [CODE], "tester": [TESTS], "optimizer": [review],
                          "checkin": ["# retries\n"]})


def _inline(config, on: bool = True):  # type: ignore[no-untyped-def]
    return dataclasses.replace(config, github=GitHubConfig(inline_review=on))


async def test_requests_land_on_their_lines_and_the_rest_in_the_body(git_host, github, tmp_path):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.serve_diffs_from(git_host.root)
    finished = await _run(_inline(_config(git_host, github, tmp_path)), _team(), _passing, tmp_path)
    assert finished.status is RunStatus.PASSED and finished.checkin.kind == "pull_request", finished.reason
    assert len(github.reviews) == 1, github.calls()[-6:]
    (review,) = github.reviews
    assert review.event == "COMMENT" and review.commit_id == finished.checkin.head
    placed = {(c["path"], c["line"]): c["body"] for c in review.comments}
    assert set(placed) == {("billing/client.py", 5), ("billing/client.py", 7)}
    assert all(c["side"] == "RIGHT" for c in review.comments)
    first = placed[("billing/client.py", 5)]
    assert "@&#8203;alice" in first and "&lt;b>check" in first and "<b>" not in first  # inert, code left as written
    assert "`return send(request)`" in first
    assert "Consider a module docstring." in review.body and "The retries look right." in review.body
    assert "for/else" not in review.body  # placed, so not repeated
    assert [(c.path, c.line) for c in github.review_comments] == [("billing/client.py", 5), ("billing/client.py", 7)]


async def test_off_by_default_posts_no_review(git_host, github, tmp_path):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.serve_diffs_from(git_host.root)
    finished = await _run(_config(git_host, github, tmp_path), _team(), _passing, tmp_path)
    assert finished.checkin.kind == "pull_request", finished.reason
    assert github.reviews == [] and not any(path.endswith("/reviews") for _, path in github.calls())


async def test_a_review_with_no_notes_posts_nothing(git_host, github, tmp_path):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.serve_diffs_from(git_host.root)
    finished = await _run(_inline(_config(git_host, github, tmp_path)), _team("VERDICT: APPROVE"), _passing, tmp_path)
    assert finished.checkin.kind == "pull_request" and github.reviews == [], finished.reason


async def test_a_review_github_refuses_is_posted_again_with_every_request_in_its_body(git_host, github, tmp_path,
                                                                                    caplog):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.serve_diffs_from(git_host.root)
    github.fail(422, times=1, method="POST", path="/repos/acme/billing/pulls/1/reviews")
    with caplog.at_level(logging.WARNING, logger="bot.repos.github"):
        finished = await _run(_inline(_config(git_host, github, tmp_path)), _team(), _passing, tmp_path)
    assert finished.checkin.kind == "pull_request", finished.reason
    (review,) = github.reviews
    assert review.comments == [] and review.event == "COMMENT"
    assert "`billing/client.py` line 5: billing/client.py:5" in review.body and "for/else" in review.body
    assert "Consider a module docstring." in review.body
    assert [r.message for r in caplog.records if "refused the inline review of acme/billing#1" in r.message]


async def test_the_fake_refuses_a_comment_outside_the_diff_as_github_does(git_host, github, tmp_path):
    make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.serve_diffs_from(git_host.root)
    finished = await _run(_config(git_host, github, tmp_path), _team(), _passing, tmp_path)

    def outside_the_diff() -> None:  # in a worker thread: the fake answers on this loop
        pull = Github(auth=Auth.Token(TOKEN), base_url=github.url, retry=None).get_repo("acme/billing").get_pull(1)
        pull.create_review(body="x", event="COMMENT",
                           comments=[{"path": "billing/money.py", "line": 2, "side": "RIGHT", "body": "no"}])
    with pytest.raises(GithubException) as refused:
        await asyncio.to_thread(outside_the_diff)
    assert refused.value.status == 422 and github.reviews == [] and finished.checkin.kind == "pull_request"


FILE = "\n".join(f"line_{n} = {n}" for n in range(1, 21)) + "\n"
PATCH = "@@ -9,7 +9,7 @@ x\n line_9 = 9\n line_10 = 10\n line_11 = 11\n-line_12 = 0\n+line_12 = 12\n line_13 = 13\n" \
        " line_14 = 14\n line_15 = 15"


def test_a_line_outside_the_diff_goes_to_the_body_with_the_line_it_names():
    asked = requests("- app.py:12 is the change\n- app.py line 3 was fine before\n- `line_14 = 14` too", {"app.py": FILE})
    assert [(r.path, r.line) for r in asked] == [("app.py", 12), ("app.py", 3), ("app.py", 14)]
    assert diff_lines(PATCH) == set(range(9, 16))
    placed = place(asked, {"app.py": diff_lines(PATCH)})
    assert [(c["path"], c["line"]) for c in placed.comments] == [("app.py", 12), ("app.py", 14)]
    assert placed.unplaced == (Request("app.py line 3 was fine before", "app.py", 3),)
    assert "- `app.py` line 3: app.py line 3 was fine before" in review_body(placed, "f" * 40)


@pytest.mark.parametrize("notes, where", [
    ("Fix `line_7 = 7` please", ("app.py", 7)),  # a quoted line, no file named
    ("In app.py line 30 is wrong", ("app.py", 0)),  # past the file's end: no line
    ("app.py, lines 12-14: one loop would do", ("app.py", 12)),  # a range: its first line
    ("`app.py#L3` is off", ("app.py", 3)),
    ("`= 1` is odd", ("", 0)),  # a quote too short to pick among lines
    ("app.py:4 but the quote `line_9 = 9` says otherwise", ("app.py", 9)),  # the quote over the number
    ("The naming is unclear", ("", 0)),
])
def test_where_a_request_is_about(notes: str, where: tuple[str, int]):
    (request,) = requests(notes, {"app.py": FILE, "lib/other.py": "x = 1\nx = 1\n"})
    assert (request.path, request.line) == where


def test_a_quote_on_two_lines_places_nothing():
    (request,) = requests("`x = 1` twice", {"lib/other.py": "x = 1\nx = 1\n"})
    assert request.line == 0
