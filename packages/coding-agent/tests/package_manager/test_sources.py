"""Source parsing table and identities (spec resources.md §6)."""

from pathlib import Path

import pytest

from apex_coding_agent.package_manager import (
    GitSource,
    LocalSource,
    PypiSource,
    SourceError,
    UnsupportedSource,
    parse_source,
)
from apex_coding_agent.package_manager.sources import source_identity


@pytest.mark.parametrize(
    ("text", "requirement", "name", "pinned"),
    [
        ("pypi:apex-skills", "apex-skills", "apex-skills", False),
        ("pypi:apex-skills==1.2.0", "apex-skills==1.2.0", "apex-skills", True),
        ("pypi:Apex_Skills.Extra>=1.0", "Apex_Skills.Extra>=1.0", "apex-skills-extra", False),
        ("pypi:apex-skills[pdf]==2.0", "apex-skills[pdf]==2.0", "apex-skills", True),
        ("pypi:apex-skills==1.*", "apex-skills==1.*", "apex-skills", False),
    ],
)
def test_pypi_sources(text: str, requirement: str, name: str, pinned: bool) -> None:
    assert parse_source(text) == PypiSource(text, requirement, name, pinned)


@pytest.mark.parametrize(
    ("text", "clone_url", "host", "path", "ref"),
    [
        ("git:github.com/user/repo", "https://github.com/user/repo", "github.com", "user/repo", None),
        ("git:github.com/user/repo@v1.2", "https://github.com/user/repo", "github.com", "user/repo", "v1.2"),
        ("git:git@github.com:user/repo@abc123", "git@github.com:user/repo", "github.com", "user/repo", "abc123"),
        (
            "git:git@gitlab.com:group/sub/repo.git",
            "git@gitlab.com:group/sub/repo.git",
            "gitlab.com",
            "group/sub/repo",
            None,
        ),
        ("https://github.com/user/repo@v2", "https://github.com/user/repo", "github.com", "user/repo", "v2"),
        (
            "https://tok@GitHub.com/user/repo.git",
            "https://tok@GitHub.com/user/repo.git",
            "github.com",
            "user/repo",
            None,
        ),
        ("ssh://git@github.com/user/repo@v3", "ssh://git@github.com/user/repo", "github.com", "user/repo", "v3"),
        ("git://example.org/team/tool", "git://example.org/team/tool", "example.org", "team/tool", None),
        ("file:///srv/repos/tool@v1", "file:///srv/repos/tool", "file", "srv/repos/tool", "v1"),
    ],
)
def test_git_sources(text: str, clone_url: str, host: str, path: str, ref: str | None) -> None:
    assert parse_source(text) == GitSource(text, clone_url, host, path, ref)


def test_git_identity_ignores_ref_scheme_and_dot_git() -> None:
    identities = {
        source_identity(text)
        for text in (
            "git:github.com/user/repo",
            "git:github.com/user/repo@v1",
            "git:git@github.com:user/repo.git@v2",
            "https://github.com/user/repo.git",
            "ssh://git@github.com/user/repo@main",
        )
    }
    assert identities == {"git:github.com/user/repo"}
    assert parse_source("git:github.com/user/repo@v1").pinned
    assert not parse_source("git:github.com/user/repo").pinned


def test_pypi_identity_is_the_normalized_name() -> None:
    assert source_identity("pypi:My_Pkg==1.0") == source_identity("pypi:my-pkg") == "pypi:my-pkg"


def test_local_paths_resolve_against_the_settings_dir(tmp_path: Path) -> None:
    base = tmp_path / "settings-dir"
    assert parse_source("./pkg", base) == LocalSource("./pkg", base / "pkg")
    assert parse_source("../pkg", base) == LocalSource("../pkg", tmp_path / "pkg")
    assert parse_source(str(tmp_path / "abs"), base) == LocalSource(str(tmp_path / "abs"), tmp_path / "abs")
    assert source_identity("./pkg", base) == source_identity("../settings-dir/pkg", base)


def test_npm_is_unsupported_and_bare_words_are_errors() -> None:
    npm = parse_source("npm:@foo/bar")
    assert isinstance(npm, UnsupportedSource)
    assert "npm" in npm.reason
    with pytest.raises(SourceError, match="Unknown package source"):
        parse_source("just-a-name")
    with pytest.raises(SourceError):
        parse_source("git:nohost")
    with pytest.raises(SourceError):
        parse_source("pypi:")
