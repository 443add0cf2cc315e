"""Path permissions that hold against symlinks, read-deny honoured by grep/find/ls, `acceptEdits` limited to the
project, and context files an untrusted project cannot point outside itself.

Facts these tests pin down (the filesystem here is case-sensitive):
- a path rule holds for the path as written and for its resolved real path (deepest existing parent resolved for a
  path that does not exist yet): deny if either is denied, allow only if both are allowed;
- a hard link is just another name for the same file: rules see names, so a hard link outside a denied directory is
  readable under the rules for *its* name;
- rules match case-sensitively: `Secrets/x` is another file than `secrets/x` (a symlink `Secrets -> secrets` is
  caught through its real path).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apex_agent.tools import AgentToolResult, ToolExecutionError
from apex_ai.testing.hypothesis_profiles import examples
from apex_ai.types import TextContent
from apex_coding_agent.core.context_files import MAX_CONTEXT_FILE_BYTES, discover_context_files
from apex_coding_agent.core.permissions import PermissionGate, PermissionRule, RuleSet
from apex_coding_agent.tools import FindTool, GrepTool, LsTool, ToolsOptions, create_tool
from apex_coding_agent.tools.find import find_fd
from apex_coding_agent.tools.grep import find_ripgrep

GREP_ENGINES = ["python"] + (["ripgrep"] if find_ripgrep() else [])
FIND_ENGINES = ["python"] + (["fd"] if find_fd() else [])
SECRET = "TOPSECRET-4242"


def _text(result: AgentToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _gate(cwd: Path, rules: list[PermissionRule], **kw: Any) -> PermissionGate:
    return PermissionGate(cwd, stores={"user": RuleSet(rules)}, **kw)


# --------------------------------------------------------------------------- item 3: symlinks and path forms


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """proj/ with src/, secrets/ and links of every kind; outside/ next to it."""
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (proj / "src").mkdir(parents=True)
    (proj / "secrets" / "sub").mkdir(parents=True)
    outside.mkdir()
    (proj / "secrets" / "key.txt").write_text(SECRET)
    (proj / "secrets" / "sub" / "deep.txt").write_text(SECRET)
    (proj / "src" / "a.py").write_text("print('a')\n")
    (outside / "victim.txt").write_text("outside")
    (proj / "src" / "link").symlink_to(outside)  # a directory link leaving the project
    (proj / "src" / "filelink").symlink_to(outside / "victim.txt")
    (proj / "src" / "dangling").symlink_to(outside / "not-yet.txt")
    (proj / "src" / "mid").symlink_to(proj / "secrets")  # a linked directory in the middle of a path
    (proj / "secretlink").symlink_to(proj / "secrets")
    (proj / "chain1").symlink_to(proj / "chain2")
    (proj / "chain2").symlink_to(proj / "secrets" / "key.txt")
    (proj / "Secrets").symlink_to(proj / "secrets")  # a case trick, caught by the real path
    return proj


ALLOW_SRC_DENY_SECRETS = [
    PermissionRule("write", "allow", "src/**"),
    PermissionRule("write", "deny", "secrets/**"),
    PermissionRule("read", "deny", "secrets/**"),
]

# (path as the model writes it, what a write may do: allow/ask/deny)
WRITE_CASES = [
    ("src/new.py", "allow"),
    ("src/a.py", "allow"),
    ("src/deeper/not/yet/there.py", "allow"),
    ("src/link/x.txt", "ask"),  # written path allowed, real path outside
    ("src/link/new/deeper/file.txt", "ask"),  # does not exist yet: deepest existing parent resolved
    ("src/filelink", "ask"),
    ("src/dangling", "ask"),  # writing creates the link's target outside
    ("src/mid/key.txt", "deny"),
    ("src/mid/new.txt", "deny"),
    ("secretlink/key.txt", "deny"),
    ("secretlink/sub/deep.txt", "deny"),
    ("chain1", "deny"),  # a chain of links ending in secrets/
    ("Secrets/key.txt", "deny"),
    ("src/../secrets/key.txt", "deny"),
    ("./src/../../outside/victim.txt", "ask"),
    ("@secrets/key.txt", "deny"),
    ("secrets/key.txt", "deny"),
]


@pytest.mark.parametrize(("path", "expected"), WRITE_CASES)
def test_write_rules_hold_for_written_and_real_path(project: Path, path: str, expected: str) -> None:
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    assert gate.check("write", {"path": path}).behavior == expected


@pytest.mark.parametrize(("path", "expected"), WRITE_CASES)
def test_read_deny_holds_through_links(project: Path, path: str, expected: str) -> None:
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    assert gate.check("read", {"path": path}).behavior == ("deny" if expected == "deny" else "allow")


def test_home_paths_are_expanded_before_matching(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(project))
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    assert gate.check("read", {"path": "~/secrets/key.txt"}).behavior == "deny"
    assert gate.check("write", {"path": "~/src/ok.py"}).behavior == "allow"
    assert gate.check("write", {"path": "~/src/link/x"}).behavior == "ask"
    # A rule may name the home directory with `~` too.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    home_rule = _gate(project, [PermissionRule("read", "deny", "~/.ssh/**")], flag_mode="default")
    for path in ("~/.ssh/id_ed25519", str(tmp_path / "home" / ".ssh" / "id_ed25519"), "../home/.ssh/config"):
        assert home_rule.check("read", {"path": path}).behavior == "deny", path
    assert home_rule.check("read", {"path": "~/notes.txt"}).behavior == "allow"


def test_hard_link_is_judged_by_its_own_name(project: Path) -> None:
    # A hard link cannot be told apart from the file: rules see names, not inodes (documented limit).
    os.link(project / "secrets" / "key.txt", project / "src" / "hard.txt")
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    assert gate.check("read", {"path": "src/hard.txt"}).behavior == "allow"
    assert gate.check("read", {"path": "secrets/key.txt"}).behavior == "deny"


def test_rules_match_case_sensitively(project: Path) -> None:
    (project / "SECRETS").mkdir()
    (project / "SECRETS" / "x.txt").write_text("not the secret: another directory on this filesystem")
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    assert gate.check("read", {"path": "SECRETS/x.txt"}).behavior == "allow"


def test_a_deny_rule_for_a_directory_tree_covers_the_directory_itself(project: Path) -> None:
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    for tool in ("ls", "grep", "find"):
        assert gate.check(tool, {"path": "secrets"}).behavior == "deny"
        assert gate.check(tool, {"path": "secretlink"}).behavior == "deny"
        assert gate.check(tool, {"path": "src"}).behavior == "allow"


def test_paths_are_resolved_against_the_cwd_as_given(tmp_path: Path) -> None:
    # The session's cwd may run through a link; tools resolve `../x` against that spelling, and so must the gate.
    real = tmp_path / "real" / "proj"
    (real / "src").mkdir(parents=True)
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    rules = [
        PermissionRule("write", "allow", "src/**"),
        PermissionRule("write", "deny", str(tmp_path / "outside.txt")),
    ]
    gate = _gate(alias, rules, flag_mode="default")
    assert gate.check("write", {"path": "../outside.txt"}).behavior == "deny"  # the tool writes tmp/outside.txt
    assert gate.check("write", {"path": str(alias / "src" / "x.py")}).behavior == "allow"
    assert gate.check("write", {"path": "src/x.py"}).rule_for_call == "src/x.py"
    accept = _gate(alias, [], flag_mode="acceptEdits")
    assert accept.check("write", {"path": str(alias / "x.py")}).behavior == "allow"
    assert accept.check("write", {"path": "../elsewhere.txt"}).behavior == "ask"


def _real_rule_path(project: Path, path: str) -> str:
    real = Path(os.path.realpath(os.path.normpath(project / path)))
    try:
        return str(real.relative_to(project)) or "."
    except ValueError:
        return str(real)


def _lexical_rule_path(project: Path, path: str) -> str:
    lexical = Path(os.path.normpath(project / path))
    try:
        return str(lexical.relative_to(project)) or "."
    except ValueError:
        return str(lexical)


SEGMENTS = ["src", "secrets", "secretlink", "link", "mid", "sub", "..", ".", "key.txt", "new", "chain1", "Secrets"]


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5))
def test_invariant_allow_only_when_both_paths_allowed(project: Path, parts: list[str]) -> None:
    path = "/".join(parts)
    gate = _gate(project, ALLOW_SRC_DENY_SECRETS, flag_mode="default")
    both = [_lexical_rule_path(project, path), _real_rule_path(project, path)]

    # `secrets/**` denies the directory itself too; `src/**` allows only what is below `src`.
    if any(p == "secrets" or p.startswith("secrets/") for p in both):
        expected = "deny"
    elif all(p.startswith("src/") for p in both):
        expected = "allow"
    else:
        expected = "ask"
    assert gate.check("write", {"path": path}).behavior == expected
    assert gate.read_denied(str(project / path)) == (expected == "deny")


# --------------------------------------------------------------------------- item 5: acceptEdits inside the project


def test_accept_edits_allows_only_inside_the_project(project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    gate = _gate(project, [], flag_mode="acceptEdits", additional_directories=[extra])
    for tool in ("write", "edit"):
        assert gate.check(tool, {"path": "src/new.py"}).behavior == "allow"
        assert gate.check(tool, {"path": str(project / "deep" / "new.py")}).behavior == "allow"
        assert gate.check(tool, {"path": str(extra / "x.py")}).behavior == "allow"
        assert gate.check(tool, {"path": str(tmp_path / "outside" / "victim.txt")}).behavior == "ask"
        assert gate.check(tool, {"path": "../outside/new.txt"}).behavior == "ask"
        assert gate.check(tool, {"path": "src/link/new.txt"}).behavior == "ask"  # inside as written, not really
        assert gate.check(tool, {"path": "src/dangling"}).behavior == "ask"
    loaded = PermissionGate.load(
        project,
        tmp_path / "agent",
        flag_mode="acceptEdits",
        policy_path=tmp_path / "none",
        additional_directories=[extra],
    )
    assert loaded.check("write", {"path": str(extra / "y.py")}).behavior == "allow"
    # An explicit allow rule still allows a path outside, as in every mode.
    ruled = _gate(
        project, [PermissionRule("write", "allow", str(tmp_path / "outside") + "/**")], flag_mode="acceptEdits"
    )
    assert ruled.check("write", {"path": str(tmp_path / "outside" / "n.txt")}).behavior == "allow"


async def test_accept_edits_outside_is_refused_without_a_responder(project: Path, tmp_path: Path) -> None:
    gate = _gate(project, [], flag_mode="acceptEdits")
    allowed, reason = await gate.authorize("write", {"path": str(tmp_path / "elsewhere.txt")})
    assert not allowed and reason == "write requires approval, and no responder is available in this session."


# --------------------------------------------------------------------------- item 4: grep/find/ls skip denied paths


@pytest.fixture
def searchable(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    files = {
        "public/a.txt": "needle public\n",
        "public/nested/b.txt": "needle nested\n",
        "secrets/key_s3cr3t.txt": f"needle {SECRET}\n",
        "secrets/.hidden_s3cr3t": f"needle {SECRET}\n",
        "secrets/inner_s3cr3t/deep_s3cr3t.txt": f"needle {SECRET}\n",
        "top.txt": "needle top\n",
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (root / "public" / "alias").symlink_to(root / "secrets" / "key_s3cr3t.txt")
    return root


READ_DENY = [PermissionRule("read", "deny", "secrets/**")]
SECRET_FILES = ["key_s3cr3t.txt", ".hidden_s3cr3t", "deep_s3cr3t.txt"]


def _tools(root: Path, grep_engine: str = "python", find_engine: str = "python") -> tuple[PermissionGate, ToolsOptions]:
    gate = _gate(root, READ_DENY, flag_mode="default")
    options = ToolsOptions(grep_engine=grep_engine, find_engine=find_engine, read_filter=gate.read_filter)  # type: ignore[arg-type]
    return gate, options


def _assert_no_leak(text: str) -> None:
    assert SECRET not in text
    assert "s3cr3t" not in text


@pytest.mark.parametrize("engine", GREP_ENGINES)
@pytest.mark.parametrize("pattern", ["needle", SECRET, ".", "s3cr3t"])
async def test_grep_never_shows_a_denied_file(searchable: Path, engine: str, pattern: str) -> None:
    _, options = _tools(searchable, grep_engine=engine)
    grep = create_tool("grep", str(searchable), options)
    for path in (".", "public", "public/nested"):
        text = _text(await grep.execute("c", {"pattern": pattern, "path": path}, None, None))
        _assert_no_leak(text)
    text = _text(await grep.execute("c", {"pattern": "needle"}, None, None))
    assert text == (
        "public/a.txt:1: needle public\npublic/nested/b.txt:1: needle nested\ntop.txt:1: needle top\n\n"
        "[3 paths skipped: reading them is denied by the permission rules]"
    )


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_grep_skip_count_does_not_depend_on_the_pattern(searchable: Path, engine: str) -> None:
    # A count of denied files that *matched* would tell the model what the secrets contain.
    _, options = _tools(searchable, grep_engine=engine)
    grep = create_tool("grep", str(searchable), options)
    texts = [_text(await grep.execute("c", {"pattern": p}, None, None)) for p in (SECRET, "zzz-nothing")]
    assert texts == ["No matches found\n\n[3 paths skipped: reading them is denied by the permission rules]"] * 2
    result = await grep.execute("c", {"pattern": "needle"}, None, None)
    assert result.details == {"skippedDenied": 3}


@pytest.mark.parametrize("engine", FIND_ENGINES)
@pytest.mark.parametrize("pattern", ["*", "**", "*s3cr3t*", "*.txt", "secrets/**"])
async def test_find_never_lists_a_denied_path(searchable: Path, engine: str, pattern: str) -> None:
    _, options = _tools(searchable, find_engine=engine)
    find = create_tool("find", str(searchable), options)
    text = _text(await find.execute("c", {"pattern": pattern}, None, None))
    _assert_no_leak(text)
    assert "secrets" not in text.split("[")[0]
    # secrets/, its 4 entries and public/alias (a link into it); the same whatever the pattern.
    assert text.endswith("[6 paths skipped: reading them is denied by the permission rules]")


@pytest.mark.parametrize("engine", FIND_ENGINES)
async def test_find_limit_counts_only_shown_entries(searchable: Path, engine: str) -> None:
    _, options = _tools(searchable, find_engine=engine)
    find = create_tool("find", str(searchable), options)
    text = _text(await find.execute("c", {"pattern": "*", "limit": 100}, None, None))
    assert text.split("\n\n")[0].split("\n") == [
        "public/",
        "public/a.txt",
        "public/nested/",
        "public/nested/b.txt",
        "top.txt",
    ]


async def test_ls_skips_denied_entries_and_says_how_many(searchable: Path) -> None:
    _, options = _tools(searchable)
    ls = create_tool("ls", str(searchable), options)
    assert _text(await ls.execute("c", {}, None, None)) == (
        "public/\ntop.txt\n\n[1 path skipped: reading them is denied by the permission rules]"
    )
    assert _text(await ls.execute("c", {"path": "public"}, None, None)) == (
        "a.txt\nnested/\n\n[1 path skipped: reading them is denied by the permission rules]"
    )


async def test_every_denied_file_is_absent_from_every_listing(searchable: Path) -> None:
    """For every file under the denied directory, no read-only tool output holds its name or content."""
    gate, options = _tools(searchable)
    outputs: list[str] = []
    for directory in [searchable, *[p for p in searchable.rglob("*") if p.is_dir()]]:
        path = str(directory)
        for name, params in (
            ("ls", {"path": path}),
            ("grep", {"pattern": ".", "path": path}),
            ("find", {"pattern": "*", "path": path}),
            ("read", {"path": path}),
        ):
            if gate.check(name, params).behavior != "allow":
                continue  # refused outright: the tool never runs
            try:
                outputs.append(
                    _text(await create_tool(name, str(searchable), options).execute("c", params, None, None))
                )
            except ToolExecutionError as exc:  # a directory given to read is an error, which must not leak either
                outputs.append(str(exc))
    assert outputs
    for text in outputs:
        _assert_no_leak(text)


def test_denied_targets_are_refused_outright(searchable: Path) -> None:
    gate, _ = _tools(searchable)
    for tool in ("grep", "find", "ls", "read"):
        decision = gate.check(tool, {"path": "secrets", "pattern": "x"})
        assert decision.behavior == "deny"
        assert decision.reason is not None and "secrets/**" in decision.reason
    assert gate.check("grep", {"path": "secrets/key_s3cr3t.txt", "pattern": "x"}).behavior == "deny"
    assert gate.check("grep", {"path": "public/alias", "pattern": "x"}).behavior == "deny"


def test_read_deny_also_blocks_edit(searchable: Path) -> None:
    # edit reads the file and shows it back in its diff.
    gate, _ = _tools(searchable)
    assert gate.check("edit", {"path": "secrets/key_s3cr3t.txt"}).behavior == "deny"
    assert gate.check("edit", {"path": "public/alias"}).behavior == "deny"
    assert gate.check("edit", {"path": "public/a.txt"}).behavior == "ask"


@pytest.mark.parametrize("engine", GREP_ENGINES)
async def test_a_higher_allow_rule_reopens_part_of_a_denied_tree(searchable: Path, engine: str) -> None:
    (searchable / "secrets" / "shared").mkdir()
    (searchable / "secrets" / "shared" / "ok.txt").write_text("needle shared\n")
    gate = PermissionGate(
        searchable,
        stores={
            "project": RuleSet([PermissionRule("read", "allow", "secrets/shared/**")]),
            "user": RuleSet(READ_DENY),
        },
        flag_mode="default",
    )
    grep = create_tool("grep", str(searchable), ToolsOptions(grep_engine=engine, read_filter=gate.read_filter))  # type: ignore[arg-type]
    text = _text(await grep.execute("c", {"pattern": "needle"}, None, None))
    assert "secrets/shared/ok.txt:1: needle shared" in text
    _assert_no_leak(text)


@pytest.mark.parametrize("rule", ["ask", "deny"])
def test_the_fast_predicate_agrees_with_the_full_check(project: Path, rule: str) -> None:
    rules = [PermissionRule("read", rule, "secrets/**"), PermissionRule("read", "allow", "secrets/sub/**")]  # type: ignore[arg-type]
    for mode in ("default", "dontAsk", "bypassPermissions", "plan"):
        gate = _gate(project, rules, flag_mode=mode)
        predicate = gate.read_filter()
        assert predicate is not None
        for path in [project, *project.rglob("*")]:
            assert predicate(str(path)) == (gate.check("read", {"path": str(path)}).behavior != "allow"), (mode, path)


def test_no_read_rule_means_no_filtering(project: Path) -> None:
    assert _gate(project, [PermissionRule("write", "deny", "secrets/**")]).read_filter() is None
    assert _gate(project, [PermissionRule("read", "allow", "src/**")]).read_filter() is None


async def test_tools_without_a_predicate_behave_as_before(searchable: Path) -> None:
    # The SDK keeps working unchanged: no predicate, nothing skipped.
    text = _text(await LsTool(str(searchable)).execute("c", {"path": "secrets"}, None, None))
    assert "key_s3cr3t.txt" in text
    assert "skipped" not in _text(await GrepTool(str(searchable)).execute("c", {"pattern": "needle"}, None, None))
    assert "skipped" not in _text(await FindTool(str(searchable)).execute("c", {"pattern": "*"}, None, None))


# --------------------------------------------------------------------------- item 6: context files


def test_untrusted_context_file_must_resolve_inside_the_project(tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "private.txt").write_text("PRIVATE-NOTES")
    (repo / "AGENTS.md").symlink_to(elsewhere / "private.txt")
    warnings: list[str] = []
    found = discover_context_files(repo, tmp_path / "agent", project_trusted=False, warn=warnings.append)
    assert found == []
    assert len(warnings) == 1 and "outside the project" in warnings[0]
    # A trusted project may link its context file anywhere.
    assert [f.content for f in discover_context_files(repo, tmp_path / "agent", project_trusted=True)] == [
        "PRIVATE-NOTES"
    ]
    # A link that stays inside the project is fine untrusted too.
    (repo / "AGENTS.md").unlink()
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("inside")
    (repo / "AGENTS.md").symlink_to(repo / "docs" / "agents.md")
    assert [f.content for f in discover_context_files(repo, tmp_path / "agent", project_trusted=False)] == ["inside"]


def test_untrusted_subdirectory_context_file_is_checked_too(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    sub = repo / "pkg"
    (repo / ".git").mkdir(parents=True)
    sub.mkdir()
    (tmp_path / "private.txt").write_text("PRIVATE")
    (sub / "CLAUDE.md").symlink_to(tmp_path / "private.txt")
    assert discover_context_files(sub, tmp_path / "agent", project_trusted=False, warn=lambda _: None) == []


def test_every_context_file_is_capped_with_a_warning(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "AGENTS.md").write_text("g" * (MAX_CONTEXT_FILE_BYTES + 10))
    (tmp_path / "AGENTS.md").write_text("small")
    warnings: list[str] = []
    found = discover_context_files(tmp_path, agent, warn=warnings.append)
    assert [len(f.content) for f in found] == [MAX_CONTEXT_FILE_BYTES, 5]
    assert MAX_CONTEXT_FILE_BYTES == 256 * 1024
    assert len(warnings) == 1 and "256 KB" in warnings[0] and str(agent / "AGENTS.md") in warnings[0]
