"""`grep`, `find` and `ls` (spec tools.md §8-10, acceptance 19-22).

grep and find run with every backend present on the machine: always the pure-Python walk, plus ripgrep / fd when
installed. Each case asserts the exact expected output, so the backends are held to the same results.
"""

from pathlib import Path

import pytest

from apex_agent.tools import AgentToolResult, ToolExecutionError
from apex_ai.abort import AbortController
from apex_ai.types import TextContent
from apex_coding_agent.tools import FindTool, GrepTool, LsTool
from apex_coding_agent.tools.find import find_fd
from apex_coding_agent.tools.grep import find_ripgrep

GREP_ENGINES = ["python"] + (["ripgrep"] if find_ripgrep() else [])
FIND_ENGINES = ["python"] + (["fd"] if find_fd() else [])


def _text(result: AgentToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small repository: ignored build output, a hidden dir, nested sources, a binary file."""
    root = tmp_path / "repo"
    files = {
        ".gitignore": "build/\n*.tmp\n",
        ".ignore": "secret.txt\n",
        "src/a.py": "import os\nneedle = 1\n",
        "src/pkg/b.py": "# needle here\nNEEDLE twice needle\n",
        "src/pkg/c.ts": "const needle = 2;\n",
        ".hidden/h.txt": "needle in hidden\n",
        "build/out.py": "needle built\n",
        "notes.tmp": "needle temp\n",
        "secret.txt": "needle secret\n",
        "docs/readme.md": "no match\n",
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (root / "src" / "blob.bin").write_bytes(b"needle\x00\x01")
    (root / ".git").mkdir()
    return root


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_respects_ignores_and_includes_hidden(tree: Path, engine: str) -> None:
    result = await GrepTool(str(tree), engine).execute("c", {"pattern": "needle"}, None, None)  # type: ignore[arg-type]
    assert _text(result) == "\n".join(
        [
            ".hidden/h.txt:1: needle in hidden",
            "src/a.py:2: needle = 1",
            "src/pkg/b.py:1: # needle here",
            "src/pkg/b.py:2: NEEDLE twice needle",
            "src/pkg/c.ts:1: const needle = 2;",
        ]
    )
    assert result.details is None


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_options(tree: Path, engine: str) -> None:
    tool = GrepTool(str(tree), engine)  # type: ignore[arg-type]
    by_glob = await tool.execute("c", {"pattern": "needle", "glob": "*.py", "path": "src"}, None, None)
    assert _text(by_glob) == "a.py:2: needle = 1\npkg/b.py:1: # needle here\npkg/b.py:2: NEEDLE twice needle"
    anchored = await tool.execute("c", {"pattern": "needle", "glob": "src/pkg/*.ts"}, None, None)
    assert _text(anchored) == "src/pkg/c.ts:1: const needle = 2;"
    # rg counts every occurrence: three on the two matching lines of b.py.
    case = await tool.execute("c", {"pattern": "NEEDLE", "ignoreCase": True, "path": "src/pkg/b.py"}, None, None)
    assert _text(case) == "b.py:1: # needle here\nb.py:2: NEEDLE twice needle"
    literal = await tool.execute("c", {"pattern": "a.b", "literal": True}, None, None)
    assert _text(literal) == "No matches found"
    assert literal.details is None
    context = await tool.execute("c", {"pattern": "import", "context": 1}, None, None)
    assert _text(context) == "src/a.py:1: import os\nsrc/a.py-2- needle = 1"


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_limit_notice(tmp_path: Path, engine: str) -> None:
    (tmp_path / "five.txt").write_text("".join(f"hit {i}\n" for i in range(5)))
    result = await GrepTool(str(tmp_path), engine).execute("c", {"pattern": "hit", "limit": 2}, None, None)  # type: ignore[arg-type]
    assert _text(result) == (
        "five.txt:1: hit 0\nfive.txt:2: hit 1\n\n[2 of 5 total matches shown. Use limit=4 for more, or refine pattern]"
    )
    assert result.details == {"matchLimitReached": 2, "totalMatches": 5}


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_long_line(tmp_path: Path, engine: str) -> None:
    (tmp_path / "long.txt").write_text("match" + "x" * 695 + "\n")
    result = await GrepTool(str(tmp_path), engine).execute("c", {"pattern": "match"}, None, None)  # type: ignore[arg-type]
    assert _text(result) == (
        "long.txt:1: match"
        + "x" * 495
        + "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert result.details == {"linesTruncated": True}


async def test_grep_errors(tmp_path: Path) -> None:
    with pytest.raises(ToolExecutionError, match=f"^Path not found: {tmp_path / 'nope'}$"):
        await GrepTool(str(tmp_path)).execute("c", {"pattern": "x", "path": "nope"}, None, None)
    if find_ripgrep() is None:
        with pytest.raises(ToolExecutionError, match=r"^ripgrep \(rg\) is not available"):
            await GrepTool(str(tmp_path), "ripgrep").execute("c", {"pattern": "x"}, None, None)


@pytest.mark.parametrize("engine", FIND_ENGINES)
async def test_find_patterns(tree: Path, engine: str) -> None:
    tool = FindTool(str(tree), engine)  # type: ignore[arg-type]
    py = await tool.execute("c", {"pattern": "*.py"}, None, None)
    assert _text(py) == "src/a.py\nsrc/pkg/b.py"
    nested = await tool.execute("c", {"pattern": "src/**/*.py"}, None, None)
    assert _text(nested) == "src/a.py\nsrc/pkg/b.py"
    from_dir = await tool.execute("c", {"pattern": "*.py", "path": "src/pkg"}, None, None)
    assert _text(from_dir) == "b.py"
    dirs = await tool.execute("c", {"pattern": "pkg"}, None, None)
    assert _text(dirs) == "src/pkg/"
    none = await tool.execute("c", {"pattern": "*.rs"}, None, None)
    assert _text(none) == "No files found matching pattern"
    assert none.details is None


@pytest.mark.parametrize("engine", FIND_ENGINES)
async def test_find_limit(tree: Path, engine: str) -> None:
    result = await FindTool(str(tree), engine).execute("c", {"pattern": "*.py", "limit": 1}, None, None)  # type: ignore[arg-type]
    lines = _text(result).split("\n")
    assert lines[0] in {"src/a.py", "src/pkg/b.py"}
    assert lines[1:] == ["", "[1 results limit reached. Use limit=2 for more, or refine pattern]"]
    assert result.details == {"resultLimitReached": 1}


async def test_find_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ToolExecutionError, match="^Path not found: "):
        await FindTool(str(tmp_path)).execute("c", {"pattern": "*", "path": "nope"}, None, None)


async def test_ls_sorting_and_markers(tmp_path: Path) -> None:
    (tmp_path / "B").write_text("")
    (tmp_path / "a").mkdir()
    (tmp_path / ".hidden").write_text("")
    (tmp_path / "empty").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "missing-target")
    result = await LsTool(str(tmp_path)).execute("c", {}, None, None)
    assert _text(result) == ".hidden\na/\nB\nempty/"
    assert result.details is None
    assert _text(await LsTool(str(tmp_path)).execute("c", {"path": "empty"}, None, None)) == "(empty directory)"


async def test_ls_limit_and_errors(tmp_path: Path) -> None:
    for name in "abc":
        (tmp_path / name).write_text("")
    limited = await LsTool(str(tmp_path)).execute("c", {"limit": 2}, None, None)
    assert _text(limited) == "a\nb\n\n[2 of 3 total entries shown. Use limit=4 for more]"
    assert limited.details == {"entryLimitReached": 2, "totalEntries": 3}
    with pytest.raises(ToolExecutionError, match=f"^Not a directory: {tmp_path / 'a'}$"):
        await LsTool(str(tmp_path)).execute("c", {"path": "a"}, None, None)
    with pytest.raises(ToolExecutionError, match=f"^Path not found: {tmp_path / 'zzz'}$"):
        await LsTool(str(tmp_path)).execute("c", {"path": "zzz"}, None, None)


async def test_search_tools_honour_abort(tree: Path) -> None:
    controller = AbortController()
    controller.abort()
    for tool, params in (
        (GrepTool(str(tree)), {"pattern": "needle"}),
        (FindTool(str(tree)), {"pattern": "*.py"}),
        (LsTool(str(tree)), {}),
    ):
        with pytest.raises(ToolExecutionError, match="^Operation aborted$"):
            await tool.execute("c", params, controller.signal, None)
