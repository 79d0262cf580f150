"""What a built-in language's dependency setup may install: registry packages by name, nothing of the files."""

from __future__ import annotations

import json

import pytest

from bot.sandbox.dependencies import refusal
from bot.sandbox.languages import DEFAULT_LANGUAGES


def setup_files(language: str) -> tuple[str, ...]:
    return DEFAULT_LANGUAGES[language].setup_when


@pytest.mark.parametrize("line", ["requests", "requests==2.32.3", "requests[socks]>=2,<3", "Django ~= 5.0",
                                  "pytest; python_version >= '3.8'", "six==1.16.0 --hash=sha256:abc",
                                  "# a comment", ""])
def test_registry_requirements_are_allowed(line):
    assert refusal({"requirements.txt": line + "\n"}, setup_files("python")) == ""


@pytest.mark.parametrize("line", ["./lib", "lib/", ".", "-e .", "--editable=./lib", "-r other.txt", "-c pins.txt",
                                  "--index-url http://evil/simple", "-i http://evil/simple", "--extra-index-url x",
                                  "-f ./wheels", "--find-links=./wheels", "--trusted-host evil", "lib.whl",
                                  "lib-1.0.tar.gz", "lib.zip", "name @ file:///work/lib", "file:///work/lib",
                                  "git+https://example.com/x.git", "name @ https://example.com/x.tar.gz",
                                  "https://example.com/x.whl", "requests \\\n  @ file:///work/lib"])
def test_anything_but_a_registry_package_is_refused(line):
    why = refusal({"requirements.txt": line + "\n"}, setup_files("python"))
    assert why.startswith("requirements.txt: line ") and "only packages from the registries" in why


def package_json(**fields) -> str:
    return json.dumps({"name": "app", "version": "1.0.0", **fields})


def test_registry_npm_versions_are_allowed():
    manifest = package_json(dependencies={"left-pad": "^1.3.0", "a": "1.x", "b": "latest", "c": "*",
                                          "d": ">=1 <2", "e": "npm:left-pad@^1.3.0", "f": "npm:@scope/pkg@1"},
                            devDependencies={"typescript": "~5.4.0"}, scripts={"test": "node --test"})
    assert refusal({"package.json": manifest}, setup_files("javascript")) == ""


@pytest.mark.parametrize("spec", ["file:../lib", "link:../lib", "./lib", "../lib", "/work/lib",
                                  "git+https://example.com/x.git", "git://example.com/x", "github:user/repo",
                                  "user/repo", "https://example.com/x.tgz", "workspace:*"])
def test_npm_dependencies_from_the_files_or_elsewhere_are_refused(spec):
    for table in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        why = refusal({"package.json": package_json(**{table: {"x": spec}})}, setup_files("typescript"))
        assert why.startswith("package.json: ") and f"{table}.x" in why


@pytest.mark.parametrize("field", ["workspaces", "bundleDependencies", "bundledDependencies", "overrides"])
def test_npm_fields_that_install_from_the_files_are_refused(field):
    assert field in refusal({"package.json": package_json(**{field: ["lib"]})}, setup_files("javascript"))


def test_a_project_npmrc_is_refused():
    files = {"package.json": package_json(), ".npmrc": "registry=http://evil/\nignore-scripts=false\n"}
    assert refusal(files, setup_files("javascript")).startswith(".npmrc: ")


CARGO = '[package]\nname = "app"\nversion = "0.1.0"\n'


@pytest.mark.parametrize("extra", ['[dependencies]\nserde = "1"\n', '[dependencies]\nlocal = { path = "../local" }\n',
                                   '[dev-dependencies]\nrand = { version = "0.8", features = ["small_rng"] }\n'])
def test_crates_io_and_path_crates_are_allowed(extra):
    """A path crate is only read by ``cargo fetch``; its build script runs with the tests, offline."""
    assert refusal({"Cargo.toml": CARGO + extra, "Cargo.lock": ""}, setup_files("rust")) == ""


@pytest.mark.parametrize("extra", ['[dependencies]\nx = { git = "https://example.com/x" }\n',
                                   '[build-dependencies]\nx = { version = "1", registry = "mine" }\n',
                                   '[target.\'cfg(unix)\'.dependencies]\nx = { git = "https://e/x" }\n',
                                   '[patch.crates-io]\nserde = { path = "serde" }\n'])
def test_crates_from_elsewhere_are_refused(extra):
    assert refusal({"Cargo.toml": CARGO + extra, "Cargo.lock": ""}, setup_files("rust")).startswith("Cargo.toml: ")


def test_a_cargo_configuration_is_refused_before_the_fetch():
    files = {"Cargo.toml": CARGO, "Cargo.lock": "", ".cargo/config.toml": "[source.crates-io]\nreplace-with = 'x'\n"}
    assert refusal(files, setup_files("rust")).startswith(".cargo/config.toml: ")


def test_only_the_files_the_languages_setup_reads_are_judged():
    files = {"requirements.txt": "./lib\n", "package.json": package_json(dependencies={"x": "file:../x"})}
    assert refusal(files, setup_files("go")) == ""
    assert refusal(files, setup_files("python")).startswith("requirements.txt")
    assert refusal(files, setup_files("javascript")).startswith("package.json")


def test_npm_runs_no_lifecycle_script():
    for language in ("javascript", "typescript"):
        assert "npm install --no-audit --no-fund --ignore-scripts" in DEFAULT_LANGUAGES[language].setup_command
