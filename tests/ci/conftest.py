"""The loopback git host and GitHub of the repository tests, for CI following."""

from tests.repos.conftest import TOKEN, git_host, github

__all__ = ["TOKEN", "git_host", "github"]
