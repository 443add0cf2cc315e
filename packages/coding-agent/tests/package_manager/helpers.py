"""Builders for package layouts, a local git repository and a fake (but real, executable) pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, name: str) -> Path:
    return write(root / name / "SKILL.md", f"---\nname: {name}\ndescription: The {name} skill.\n---\nBody of {name}.\n")


def conventional_package(root: Path) -> Path:
    """A package without a manifest: one of every kind of resource, plus things that must be ignored."""
    write(root / "extensions" / "tool.py", "def extension(pi):\n    pass\n")
    write(root / "extensions" / "pkgext" / "__init__.py", "def extension(pi):\n    pass\n")
    write(root / "extensions" / "notes.txt", "ignored")
    skill(root / "skills", "alpha")
    skill(root / "skills" / "group", "beta")
    write(root / "skills" / "single.md", "---\ndescription: Single file skill.\n---\nx\n")
    write(root / "prompts" / "review.md", "Review $@\n")
    write(root / "prompts" / "nested" / "deep.md", "not scanned")
    write(root / "themes" / "night.json", "{}")
    write(root / "themes" / ".hidden.json", "{}")
    return root


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def git_repo(root: Path) -> Path:
    """A repo with tag v1 (one prompt) and tag v2 (a second prompt); `main` is at v2."""
    root.mkdir(parents=True)
    git(root, "init", "--quiet", "-b", "main")
    write(root / "prompts" / "one.md", "One\n")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "one")
    git(root, "tag", "v1")
    write(root / "prompts" / "two.md", "Two\n")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "two")
    git(root, "tag", "v2")
    return root


FAKE_PIP = '''#!{python}
"""Stands in for `pip install --target DIR [--upgrade] REQ...`: copies <index>/<name>/ into DIR, logs argv."""
import json, re, shutil, sys
from pathlib import Path

LOG = Path({log!r})
INDEX = Path({index!r})
with LOG.open("a") as handle:
    handle.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
assert args[0] == "install" and args[1] == "--target", args
target = Path(args[2])
target.mkdir(parents=True, exist_ok=True)
for req in args[3:]:
    if req.startswith("-"):
        continue
    name = re.match(r"[A-Za-z0-9._-]+", req).group(0).lower().replace("_", "-")
    source = INDEX / name
    if not source.is_dir():
        print(f"ERROR: No matching distribution found for {{req}}", file=sys.stderr)
        sys.exit(1)
    shutil.copytree(source, target, dirs_exist_ok=True)
'''


class FakePip:
    """A real executable that records each invocation; `command` is the `pipCommand` setting value."""

    def __init__(self, root: Path) -> None:
        self.index = root / "index"
        self.index.mkdir(parents=True)
        self.log = root / "pip-log.jsonl"
        self.script = root / "fake-pip"
        self.script.write_text(FAKE_PIP.format(python=sys.executable, log=str(self.log), index=str(self.index)))
        self.script.chmod(0o755)
        self.command = [str(self.script)]

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def publish(self, name: str) -> Path:
        """A distribution `name` whose import package carries a skill and a prompt; returns the import dir."""
        module = self.index / name / name.replace("-", "_")
        write(module / "__init__.py")
        skill(module / "skills", f"{name}-skill")
        write(module / "prompts" / "hello.md", "Hello\n")
        write(self.index / name / f"{name.replace('-', '_')}-1.0.dist-info" / "METADATA", f"Name: {name}\n")
        return module
