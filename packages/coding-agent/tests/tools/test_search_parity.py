"""grep/find give the same answers with ripgrep/fd and with the pure-Python walk (issue 4: "same results, tested
both ways"), in the corners where they used to differ: symlinks met while walking, a negated `glob` naming a
directory, a positive `glob` naming ignored paths, and `find` given a file as its search path.

Every case asserts the exact expected text, so the Python walk is held to rg's/fd's behaviour even on a machine
without the binaries.
"""

from pathlib import Path

import pytest

from apex_agent.tools import AgentToolResult, ToolExecutionError
from apex_ai.types import TextContent
from apex_coding_agent.tools import FindTool, GrepTool
from apex_coding_agent.tools.find import find_fd
from apex_coding_agent.tools.grep import find_ripgrep

GREP_ENGINES = ["python"] + (["ripgrep"] if find_ripgrep() else [])
FIND_ENGINES = ["python"] + (["fd"] if find_fd() else [])


def _text(result: AgentToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    files = {
        ".gitignore": "out/\n",
        "sub/.gitignore": "local.txt\n",
        "sub/a.py": "needle a\n",
        "sub/local.txt": "needle local\n",
        "sub/out/w.py": "needle w\n",
        "sub/deep/b.py": "needle b\n",
        "other/sub/c.py": "needle c\n",
        "x.py": "needle x\n",
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (root / ".git").mkdir()
    (root / "link.py").symlink_to(root / "x.py")
    (root / "linkdir").symlink_to(root / "sub")
    return root


async def _grep(root: Path, engine: str, **params: object) -> str:
    return _text(await GrepTool(str(root), engine).execute("c", {"pattern": "needle", **params}, None, None))  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_skips_symlinks_met_while_walking(repo: Path, engine: str) -> None:
    assert await _grep(repo, engine) == (
        "other/sub/c.py:1: needle c\nsub/a.py:1: needle a\nsub/deep/b.py:1: needle b\nx.py:1: needle x"
    )


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_negated_glob_prunes_matching_directories(repo: Path, engine: str) -> None:
    assert await _grep(repo, engine, glob="!sub") == "x.py:1: needle x"
    assert await _grep(repo, engine, glob="!deep") == (
        "other/sub/c.py:1: needle c\nsub/a.py:1: needle a\nx.py:1: needle x"
    )


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_positive_glob_overrides_ignore_files(repo: Path, engine: str) -> None:
    assert await _grep(repo, engine, glob="sub/**") == (
        "sub/a.py:1: needle a\nsub/deep/b.py:1: needle b\nsub/local.txt:1: needle local\nsub/out/w.py:1: needle w"
    )
    # A glob that names no directory leaves the ignored `out/` pruned.
    assert await _grep(repo, engine, glob="*.py") == (
        "other/sub/c.py:1: needle c\nsub/a.py:1: needle a\nsub/deep/b.py:1: needle b\nx.py:1: needle x"
    )


@pytest.mark.parametrize("engine", FIND_ENGINES)
async def test_find_with_a_file_as_search_path_is_the_same_error(repo: Path, engine: str) -> None:
    with pytest.raises(ToolExecutionError) as info:
        await FindTool(str(repo), engine).execute("c", {"pattern": "*.py", "path": "x.py"}, None, None)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"[fd error]: Search path '{repo / 'x.py'}' is not a directory.\n[fd error]: No valid search paths given."
    )


async def test_find_outside_a_repository_honours_gitignore_with_any_fd(tmp_path: Path) -> None:
    # fd before 8.7 has no --no-require-git; the default engine must still apply the .gitignore here.
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    for name in ("src/a.py", "build/gen.py", "debug.log", "keep.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    result = await FindTool(str(tmp_path)).execute("c", {"pattern": "*"}, None, None)
    assert _text(result) == ".gitignore\nkeep.txt\nsrc/\nsrc/a.py"
