"""The one rule for paths from outside: inside the project, printable, bounded, and no host control names."""

from __future__ import annotations

import pytest

from agents.paths import MAX_DEPTH, MAX_PART_BYTES, MAX_PATH_CHARS, UnsafePath, clash, host_control_name, project_path


@pytest.mark.parametrize("raw, expected", [
    ("./src//pkg/../app.py", "src/app.py"),
    ("src\\win\\path.py", "src/win/path.py"),
    ("`app.py`", "app.py"),
    (".gitignore", ".gitignore"),
    (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    ("notes/git/readme.md", "notes/git/readme.md"),
    ("ab:c.py", "ab:c.py"),
])
def test_ordinary_paths_are_normalised(raw, expected):
    assert project_path(raw) == expected


@pytest.mark.parametrize("raw", ["/etc/passwd", "../outside.py", "a/../../b.py", "C:\\x.py", "c:/x.py", "..", ".", "",
                                 "  ", "''"])
def test_paths_that_leave_the_project_are_refused(raw):
    with pytest.raises(UnsafePath, match="inside the project"):
        project_path(raw)


@pytest.mark.parametrize("raw", [
    ".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD", ".GIT/config", ".Git./config", ".git /config",
    ".g\u200cit/config", "GIT~1/config", ".hg/hgrc", ".svn/entries", ".bzr/branch.conf", "_darcs/prefs",
    ".jj/repo", ".vscode/tasks.json", ".idea/workspace.xml", ".envrc", "web/.npmrc", ".yarnrc.yml",
    ".pnpmfile.cjs", ".git",
])
def test_names_host_tools_act_on_are_refused_in_any_spelling(raw):
    with pytest.raises(UnsafePath, match="tools on the user's machine"):
        project_path(raw)


@pytest.mark.parametrize("raw", ["a\x1b[2Jb.py", "bell\x07.py", "new\nline.py", "nul\x00.py", "c1\x9b31m.py"])
def test_control_characters_are_refused_and_shown_escaped(raw):
    with pytest.raises(UnsafePath, match="control characters") as caught:
        project_path(raw)
    assert not any(ch in str(caught.value) for ch in "\x1b\x07\n\x00\x9b")


def test_overlong_names_paths_and_depths_are_refused():
    with pytest.raises(UnsafePath, match=f"longer than {MAX_PART_BYTES}"):
        project_path("é" * 200 + ".py")  # 400 bytes in UTF-8
    with pytest.raises(UnsafePath, match="too long"):
        project_path("/".join(["d" * 200] * 6) + "/x.py")
    with pytest.raises(UnsafePath, match="too long"):
        project_path("a/" * MAX_DEPTH + "x.py")
    assert len(project_path("/".join(["d" * 100] * 10))) < MAX_PATH_CHARS


def test_control_names_match_only_whole_parts():
    assert host_control_name(".git") and host_control_name(".GIT.")
    assert not host_control_name(".gitignore") and not host_control_name("git") and not host_control_name("digit")


def test_clashes_between_files_and_folders_or_case():
    assert clash(["pkg", "pkg/mod.py"]) == "'pkg' is both a file and a folder"
    assert clash(["a/b/c.py", "a/b"]) == "'a/b' is both a file and a folder"
    assert clash(["a/b/c.py", "a"]) == "'a' is both a file and a folder"
    assert clash(["App.py", "app.py"]) == "'App.py' and 'app.py' differ only in case"
    assert clash(["pkg/mod.py", "pkg/util.py", "pkg2.py", "main.py"]) is None
