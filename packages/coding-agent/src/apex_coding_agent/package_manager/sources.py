"""Package sources: what a `packages` entry or an `install` argument names.

| Text | Parsed as |
|---|---|
| `pypi:<requirement>` | `PypiSource`; `name==1.2` is pinned |
| `git:host/user/repo[@ref]`, `git:git@host:user/repo[@ref]` | `GitSource` |
| `https://…[@ref]`, `http://…`, `ssh://…`, `git://…`, `file://…` | `GitSource` (protocol URLs need no `git:`) |
| `/abs`, `./rel`, `../rel`, `~/x` | `LocalSource`, relative to the settings file's directory |
| `npm:…` | `UnsupportedSource` (warned about and skipped) |

Identity (two entries naming the same package): the normalized PyPI name, the git URL without its ref, or the
resolved local path. A git ref names a tag or commit and pins the package (updates skip it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

_PROTOCOLS = ("https://", "http://", "ssh://", "git://", "file://")
_PYPI_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_SCP_LIKE = re.compile(r"^(?P<user>[^@/:]+)@(?P<host>[^:/]+):(?P<path>.+)$")


class SourceError(ValueError):
    """The text names no package source we can handle."""


@dataclass(frozen=True)
class PypiSource:
    """`pypi:<requirement>`: installed with `<pipCommand> install --target <dir> <requirement>`."""

    raw: str
    requirement: str
    name: str
    """PEP 503 normalized distribution name (`My_Pkg` -> `my-pkg`)."""
    pinned: bool

    @property
    def identity(self) -> str:
        return f"pypi:{self.name}"


@dataclass(frozen=True)
class GitSource:
    """A git repository: `clone_url` is what `git clone` receives; `host`/`path` name the install directory."""

    raw: str
    clone_url: str
    host: str
    path: str
    ref: str | None

    @property
    def pinned(self) -> bool:
        return self.ref is not None

    @property
    def identity(self) -> str:
        return f"git:{self.host}/{self.path}"


@dataclass(frozen=True)
class LocalSource:
    """A file (one extension) or a directory (package rules) used in place, never copied."""

    raw: str
    path: Path

    @property
    def pinned(self) -> bool:
        return True

    @property
    def identity(self) -> str:
        return f"local:{os.path.realpath(self.path)}"


@dataclass(frozen=True)
class UnsupportedSource:
    """A source kind that exists only in the TypeScript product (`npm:`)."""

    raw: str
    reason: str

    @property
    def pinned(self) -> bool:
        return True

    @property
    def identity(self) -> str:
        return f"unsupported:{self.raw}"


ParsedSource: TypeAlias = PypiSource | GitSource | LocalSource | UnsupportedSource


def normalize_pypi_name(name: str) -> str:
    """PEP 503: runs of `-`, `_`, `.` become one `-`, lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _parse_pypi(raw: str, requirement: str) -> PypiSource:
    match = _PYPI_NAME.match(requirement)
    if not requirement.strip() or match is None:
        raise SourceError(f"Invalid PyPI requirement: {raw}")
    specifier = requirement[match.end() :]
    # `==1.2` pins; `===` is arbitrary equality (also a pin); `==1.*` is a range, so it is not.
    pinned = "==" in specifier and "*" not in specifier and "," not in specifier
    return PypiSource(raw, requirement.strip(), normalize_pypi_name(match.group(1)), pinned)


def _split_ref(path: str) -> tuple[str, str | None]:
    """`user/repo@v1` -> (`user/repo`, `v1`); an `@` in an earlier path segment is not a ref."""
    last_slash = path.rfind("/")
    at = path.rfind("@")
    if at > last_slash and at < len(path) - 1:
        return path[:at], path[at + 1 :]
    return path, None


def _repo_path(path: str) -> str:
    cleaned = path.strip("/")
    if cleaned.endswith(".git"):
        cleaned = cleaned[: -len(".git")]
    if not cleaned or any(part in ("", ".", "..") for part in cleaned.split("/")):
        raise SourceError(f"Invalid git repository path: {path}")
    return cleaned


def _parse_protocol_url(raw: str, url: str) -> GitSource:
    scheme, rest = url.split("://", 1)
    if scheme == "file":
        location, ref = _split_ref(rest)
        return GitSource(raw, f"file://{location}", "file", _repo_path(location), ref)
    authority, slash, path = rest.partition("/")
    if not slash or not authority:
        raise SourceError(f"Invalid git URL: {raw}")
    path, ref = _split_ref(path)
    host = authority.rsplit("@", 1)[-1]
    return GitSource(raw, f"{scheme}://{authority}/{path}", host.lower(), _repo_path(path), ref)


def _parse_git_shorthand(raw: str, text: str) -> GitSource:
    if text.startswith(_PROTOCOLS):
        return _parse_protocol_url(raw, text)
    scp = _SCP_LIKE.match(text)
    if scp is not None:
        path, ref = _split_ref(scp.group("path"))
        clone = f"{scp.group('user')}@{scp.group('host')}:{path}"
        return GitSource(raw, clone, scp.group("host").lower(), _repo_path(path), ref)
    host, slash, path = text.partition("/")
    if not slash or not host or "." not in host and host != "localhost":
        raise SourceError(f"Invalid git source (expected git:host/user/repo): {raw}")
    path, ref = _split_ref(path)
    return GitSource(raw, f"https://{host}/{path}", host.lower(), _repo_path(path), ref)


def is_local_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or text in (".", "..") or os.path.isabs(text)


def parse_source(text: str, base_dir: str | os.PathLike[str] | None = None) -> ParsedSource:
    """Parse one source; relative local paths resolve against `base_dir` (the settings file's directory).

    Raises `SourceError` for text that names nothing we know (e.g. a bare word, which might be a typo'd path).
    """
    raw = text
    text = text.strip()
    if text.startswith("npm:"):
        return UnsupportedSource(raw, "npm packages are not supported by the Python port; use pypi: or git:")
    if text.startswith("pypi:"):
        return _parse_pypi(raw, text[len("pypi:") :])
    # Before `git:`: the protocol `git://` starts with the same four characters.
    if text.startswith(_PROTOCOLS):
        return _parse_protocol_url(raw, text)
    if text.startswith("git:"):
        return _parse_git_shorthand(raw, text[len("git:") :])
    if is_local_path(text):
        path = Path(os.path.expanduser(text))
        if not path.is_absolute():
            path = Path(base_dir if base_dir is not None else os.getcwd()) / path
        return LocalSource(raw, Path(os.path.normpath(path)))
    raise SourceError(f"Unknown package source: {raw} (use pypi:<name>, git:<host>/<path>, a URL or a ./path)")


def source_identity(text: str, base_dir: str | os.PathLike[str] | None = None) -> str:
    """The identity of a source text; unparseable text is its own identity."""
    try:
        return parse_source(text, base_dir).identity
    except SourceError:
        return f"raw:{text.strip()}"


__all__ = [
    "GitSource",
    "LocalSource",
    "ParsedSource",
    "PypiSource",
    "SourceError",
    "UnsupportedSource",
    "is_local_path",
    "normalize_pypi_name",
    "parse_source",
    "source_identity",
]
