"""What the team may not write in a repository: its existing tests (by name, and the files its tests ran from before
the change), the data they check against, the test configuration that reaches them (a conftest.py or pytest.ini
could skip or rewrite them), and CI configuration."""

import pytest

from agents.repository import configures_tests, files_holding_tests, is_ci, is_test_data, without_protected
from agents.types import FileSet

EXISTING = frozenset({"tests/test_money.py", "pkg/sub/test_deep.py"})


def test_test_configuration_is_protected_where_an_existing_test_lies_below_it():
    assert configures_tests("conftest.py", EXISTING) and configures_tests("tests/conftest.py", EXISTING)
    assert configures_tests("pytest.ini", EXISTING) and configures_tests("pkg/jest.config.ts", EXISTING)
    assert not configures_tests("tests/new_area/conftest.py", EXISTING)  # no existing test below it
    assert not configures_tests("docs/conftest.py", EXISTING) and not configures_tests("tests/helpers.py", EXISTING)
    assert not configures_tests("conftest.py", frozenset())  # a repository with no tests yet


def test_without_protected_drops_tests_their_configuration_and_ci_and_keeps_the_rest():
    written = FileSet({"billing/client.py": "x", "tests/test_money.py": "weakened", "tests/conftest.py": "skip",
                          "tests/test_new.py": "new", ".github/workflows/ci.yml": "leak"})
    kept, tests, ci = without_protected(written, EXISTING)
    assert sorted(kept) == ["billing/client.py", "tests/test_new.py"]
    assert tests == ["tests/conftest.py", "tests/test_money.py"] and ci == [".github/workflows/ci.yml"]


@pytest.mark.parametrize("path", ["bitbucket-pipelines.yml", ".drone.yml", ".woodpecker/build.yml",
                                  ".gitlab/ci/test.yml", ".gitea/workflows/ci.yml", "ci/Jenkinsfile",
                                  "cloudbuild.yaml", "buildspec.yml", ".github/workflows/ci.yml"])
def test_the_ci_configuration_of_other_services_is_protected_too(path):
    assert is_ci(path)


@pytest.mark.parametrize("path", [".woodpecker.yaml", ".cirrus.yml", ".cirrus.star", "bitrise.yml",
                                  ".teamcity/settings.kts", "bamboo-specs/bamboo.yml", ".builds/alpine.yml",
                                  ".build.yml", ".zuul.yaml", "zuul.d/jobs.yaml", "netlify.toml", "vercel.json",
                                  ".drone.jsonnet", "buildkite.yml", "codeship-steps.yml", ".harness/pipeline.yaml"])
def test_the_configuration_of_each_well_known_ci_service_is_protected(path):
    kept, tests, ci = without_protected(FileSet({path: "steps: [leak]", "billing/client.py": "x"}), EXISTING)
    assert ci == [path] and list(kept) == ["billing/client.py"] and tests == []


def test_files_that_only_look_like_ci_are_not():
    assert not any(is_ci(p) for p in ("docs/ci.md", "src/pipelines.yml", ".github/CODEOWNERS", "gitlab/client.py",
                                      "docs/netlify.toml", "src/builds/app.py", "site/zuul.d/x.yaml"))


TREE = ("billing/__init__.py", "billing/money.py", "billing/checks.py", "billing/checks/__init__.py",
        "billing/api/checks.py", "billing.py", "docs/usage.rst")


def test_the_files_a_test_run_ran_tests_from_are_found_by_the_reports_dotted_names_whatever_they_are_named():
    ran = ("billing.checks::test_cents", "billing.checks.TestCents::test_round[1.25]",
           "billing.api.checks.TestApi.TestNested::test_get")
    assert files_holding_tests(ran, TREE) == {"billing/checks.py", "billing/api/checks.py"}  # the longest path that exists


def test_a_doctest_or_a_name_no_file_has_names_no_test_file():
    ran = ("billing.money::billing.money.cents", "docs.usage.rst::usage.rst", "gone.module::test_x", "::test_y")
    assert files_holding_tests(ran, TREE) == frozenset()  # billing/money.py is code: its doctests do not make it a test


@pytest.mark.parametrize("path", ["src/__snapshots__/money.test.js.snap", "pkg/testdata/golden.json",
                                  "testdata/input.txt", "web/__mocks__/api.js", "src/snapshots/money__cents.snap",
                                  "calc/expected.golden", "app/__fixtures__/user.json"])
def test_the_data_beside_the_tests_is_test_data(path):
    assert is_test_data(path)


def test_data_that_the_tests_do_not_check_against_is_not_test_data():
    assert not any(is_test_data(p) for p in ("data/prices.json", "src/snapshot.py", "docs/testing.md",
                                             "mytestdata/x.txt"))
