"""The repository map: paths and top-level names within a fixed budget, reading only what it shows."""

from __future__ import annotations

from bot.repos.map import map_candidates, repository_map, top_level_names


def test_top_level_names_per_language():
    assert top_level_names("a.py", "import x\n\nclass Client:\n    def inner(self): ...\n\nasync def fetch():\n") == [
        "Client", "fetch"]
    assert top_level_names("a.go", "package a\n\nfunc (c *C) Do() {}\nfunc New() *C {}\ntype C struct{}\n") == [
        "Do", "New", "C"]
    assert top_level_names("a.js", "export function add(a, b) {}\nconst sub = () => 1\nclass K {}\n") == [
        "add", "sub", "K"]
    assert top_level_names("README.md", "# def not_code") == []


def test_the_map_keeps_its_budget_and_reads_only_what_it_shows():
    def tree(count: int) -> dict[str, str]:
        return {f"pkg{i % 50}/mod_{i}.py": f"def f{i}():\n    pass\n" for i in range(count)}

    for count in (10, 1_000, 100_000):
        files = tree(count)
        reads: list[str] = []

        def read(path: str, files: dict[str, str] = files, reads: list[str] = reads) -> str:
            reads.append(path)
            return files[path]

        text = repository_map(files, read, 2_000)
        assert len(text) <= 2_000
        assert len(reads) <= 2_000 // 10  # a line per file read, and every line is at least that long
        if count > 100:
            assert "more files: pkg" in text
            assert {line.split("/")[0] for line in text.splitlines()[:50]} == {f"pkg{i}" for i in range(50)}
    assert len(map_candidates(tree(100_000), 2_000)) == 100


def test_a_small_repository_is_shown_whole():
    files = {"app.py": "def main():\n", "lib/util.py": "class Helper:\n", "README.md": "# x\n"}
    assert repository_map(files, files.get, 2_000) == "README.md\napp.py: main\nlib/util.py: Helper"
