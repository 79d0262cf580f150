"""The reply readers on a corpus of replies that drift from the documented formats (tests/agents/corpus)."""

import tomllib
from pathlib import Path

import pytest

from agents.replies import FileContext, ReplyFormatError, parse_files, parse_plan, parse_review, parse_triage

CORPUS = Path(__file__).parent / "corpus"
CASES = tomllib.loads((CORPUS / "cases.toml").read_text())["case"]


def reply(case):
    return (CORPUS / case["reply"]).read_text()


def case_id(case):
    return f"{case['kind']}:{case['reply']}"


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "files"], ids=case_id)
def test_the_files_in_each_reply_are_read(case):
    context = FileContext(language=case["language"], code=case.get("code", {}), mentioned=case.get("mentioned", ""),
                          writes_tests=case["role"] == "tester")
    if "refused" in case:  # nothing in the reply may become a file: the model is asked again, told why
        with pytest.raises(ReplyFormatError, match=case["refused"]):
            parse_files(reply(case), context)
        return
    read = parse_files(reply(case), context)
    assert sorted(read.files) == sorted(case["expect"])
    for path, line in case["expect"].items():
        assert line in read.files[path]
    for path, line in case.get("absent", {}).items():
        assert line not in read.files[path]
    for words in case.get("notices", []):
        assert any(words in notice for notice in read.notices), read.notices


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "review"], ids=case_id)
def test_the_verdict_of_each_review_is_read(case):
    assert parse_review(reply(case)).approved is case["approved"]


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "triage"], ids=case_id)
def test_the_decision_of_each_triage_is_read(case):
    assert parse_triage(reply(case)).action == case["action"]


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "plan"], ids=case_id)
def test_each_plan_is_taken_with_its_language_line(case):
    plan, language = parse_plan(reply(case))
    assert plan and language == case["language_line"]


def test_the_corpus_holds_replies_recorded_from_real_small_models():
    assert sum(c["source"] == "smollm2" for c in CASES) >= 5
    assert sum(c["source"] == "qwen2.5-coder-0.5b" for c in CASES) >= 4


def test_every_reply_in_the_corpus_is_used_by_a_case():
    used = {c["reply"] for c in CASES}
    assert {p.name for p in CORPUS.glob("*.md")} <= used
