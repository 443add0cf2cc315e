"""The permission gate every tool call passes.

Rules come from ordered sources (policy highest, session lowest); a mode overlays them. The
outcome is allow, deny (with a reason the model reads as an error result) or ask (a responder
decides; print/json/rpc runs have none, so asking there blocks the call).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeAlias

from apex_coding_agent.core.bash_rules import allow_rule_matches, deny_rule_matches, single_command_rule
from apex_coding_agent.tools.path_utils import resolve_read_path, resolve_to_cwd

PermissionMode: TypeAlias = Literal["default", "plan", "acceptEdits", "bypassPermissions", "dontAsk"]
Behavior: TypeAlias = Literal["allow", "deny", "ask"]
Source: TypeAlias = Literal["policy", "flag", "local", "project", "user", "cliArg", "command", "session"]
ResponderAnswer: TypeAlias = Literal["allow_once", "always", "deny"]

PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "plan", "acceptEdits", "bypassPermissions", "dontAsk")
SOURCES: tuple[Source, ...] = ("policy", "flag", "local", "project", "user", "cliArg", "command", "session")
MODE_SOURCES: tuple[Source, ...] = ("local", "project", "user", "command", "session")
DEFAULT_POLICY_PATH = "/etc/apex-code/policy.json"


class PermissionConfigError(ValueError):
    """A rule file has a shape other than `{}` or `{"version": 1, "rules": [...], "mode"?}`."""


@dataclass(frozen=True)
class PermissionRule:
    tool_name: str
    behavior: Behavior
    rule_content: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"toolName": self.tool_name, "behavior": self.behavior}
        if self.rule_content is not None:
            out["ruleContent"] = self.rule_content
        return out


@dataclass
class RuleSet:
    rules: list[PermissionRule] = field(default_factory=list)
    mode: PermissionMode | None = None


@dataclass(frozen=True)
class ToolContract:
    """What a tool can do and what happens without a rule."""

    capabilities: frozenset[str]
    default: Behavior
    matcher: Literal["path", "bash", "none"] = "none"
    verb: str = "Using"
    plan_default: Behavior | None = None
    """What `plan` mode does without a rule, when not `default` (an MCP tool its server marks read-only: allow)."""


BUILTIN_CONTRACTS: dict[str, ToolContract] = {
    "read": ToolContract(frozenset({"fs.read"}), "allow", "path", "Reading"),
    "grep": ToolContract(frozenset({"fs.read"}), "allow", "path", "Searching"),
    "find": ToolContract(frozenset({"fs.read"}), "allow", "path", "Searching"),
    "ls": ToolContract(frozenset({"fs.read"}), "allow", "path", "Listing"),
    "write": ToolContract(frozenset({"fs.write"}), "ask", "path", "Writing"),
    "edit": ToolContract(frozenset({"fs.read", "fs.write"}), "ask", "path", "Editing"),
    "bash": ToolContract(frozenset({"exec"}), "ask", "bash", "Running"),
    # Reads skill metadata already in memory: nothing to ask about.
    "skill_search": ToolContract(frozenset(), "allow"),
}
UNCLASSIFIED = ToolContract(frozenset(), "ask")
RUNTIME_CONTRACTS: dict[str, ToolContract] = {}
"""Contracts of tools that come and go while the process runs (MCP tools), by name; a gate's own win."""
PLAN_BLOCKED = frozenset({"fs.write", "exec", "delegate"})
EDIT_ONLY_BLOCKERS = frozenset({"exec", "net", "delegate", "state"})


def parse_rule_file(data: Any, origin: str) -> RuleSet:
    """Validate the JSON of a rule file; raise `PermissionConfigError` naming `origin` otherwise."""
    if data == {}:
        return RuleSet()
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("rules", []), list):
        raise PermissionConfigError(f'{origin}: expected {{"version": 1, "rules": [...]}}')
    rules = []
    for raw in data.get("rules", []):
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("toolName"), str)
            or raw.get("behavior") not in ("allow", "deny", "ask")
            or not isinstance(raw.get("ruleContent", ""), str)
        ):
            raise PermissionConfigError(f"{origin}: invalid rule {json.dumps(raw)}")
        rules.append(PermissionRule(raw["toolName"], raw["behavior"], raw.get("ruleContent")))
    mode = data.get("mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise PermissionConfigError(f"{origin}: unknown mode {mode!r}")
    return RuleSet(rules, mode)


def load_rule_file(path: Path) -> RuleSet:
    if not path.exists():
        return RuleSet()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # invalid JSON, not UTF-8, nested too deeply
        raise PermissionConfigError(f"{path}: {exc}") from exc
    return parse_rule_file(data, str(path))


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob: `**` crosses directories, `*`/`?` stay within one; dotfiles match like any name."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def path_for_rules(path: str | None, cwd: Path) -> str:
    """cwd-relative path of a call (absolute when outside cwd; `.` when the call names none).

    The path is expanded exactly as the tools expand it (one leading `@`, `~`, unicode spaces, `..` folded), so a
    rule judges the file the tool will touch.
    """
    if not path:
        return "."
    absolute = Path(resolve_to_cwd(path, str(cwd)))
    try:
        relative = absolute.relative_to(cwd)
    except ValueError:
        return str(absolute)
    return str(relative) or "."


def _real_paths(tool_name: str, path: str | None, cwd: Path) -> list[str]:
    """The resolved real paths a call may touch, when they differ from the path as written.

    `os.path.realpath` resolves every existing component (links in the middle of a path, chains of links, a
    dangling link's target) and keeps the part that does not exist yet, so a write that creates a file is judged by
    where its deepest existing parent really is.
    """
    raw = path or "."
    candidates = [resolve_to_cwd(raw, str(cwd))]
    if tool_name == "read":
        candidates.append(resolve_read_path(raw, str(cwd)))  # read may open a differently spelled existing file
    written = path_for_rules(path, cwd)
    out: list[str] = []
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if path_for_rules(real, cwd) != written and real not in out:
            out.append(real)
    return out


_STRICTNESS: dict[Behavior, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Decision:
    behavior: Behavior
    reason: str | None = None
    rule_for_call: str | None = None
    source: Source | None = None


Responder: TypeAlias = Callable[[str, Mapping[str, Any], str | None], Awaitable[ResponderAnswer]]


class PermissionGate:
    """Decides each tool call. `stores` maps a source to its rules; load errors block every call."""

    def __init__(
        self,
        cwd: str | Path,
        *,
        stores: Mapping[Source, RuleSet] | None = None,
        flag_mode: PermissionMode | None = None,
        project_trusted: bool = True,
        contracts: Mapping[str, ToolContract] | None = None,
        responder: Responder | None = None,
        load_errors: list[str] | None = None,
        additional_directories: Sequence[str | Path] = (),
    ) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        self._logical_cwd = Path(os.path.abspath(cwd))  # the spelling the model sees, when the cwd has links in it
        # Besides the project, where `acceptEdits` may write without asking.
        self.additional_directories = [Path(os.path.realpath(os.path.expanduser(d))) for d in additional_directories]
        self.stores: dict[Source, RuleSet] = {s: RuleSet() for s in SOURCES}
        self.stores.update(stores or {})
        self.flag_mode = flag_mode
        self.project_trusted = project_trusted
        self.contracts = dict(BUILTIN_CONTRACTS)
        self.contracts.update(contracts or {})
        self.responder = responder
        self.load_errors = list(load_errors or [])
        self.load_error_messages: list[str] = []
        """Why each file of `load_errors` failed, each naming its file (set by `load`)."""

    @classmethod
    def load(
        cls,
        cwd: str | Path,
        agent_dir: str | Path,
        *,
        flag_mode: PermissionMode | None = None,
        allowed_tools: list[str] | None = None,
        project_trusted: bool = True,
        policy_path: str | Path | None = None,
        responder: Responder | None = None,
        additional_directories: Sequence[str | Path] = (),
    ) -> PermissionGate:
        """Read the policy, local, project and user files; a file that fails to load is recorded."""
        root = Path(cwd)
        policy = policy_path or os.environ.get("APEX_CODE_POLICY_PATH") or DEFAULT_POLICY_PATH
        files: dict[Source, Path] = {
            "policy": Path(policy),
            "local": root / ".apex-code" / "permissions.local.json",
            "project": root / ".apex-code" / "permissions.json",
            "user": Path(agent_dir) / "permissions.json",
        }
        stores: dict[Source, RuleSet] = {}
        errors: list[str] = []
        messages: list[str] = []
        for source, path in files.items():
            try:
                stores[source] = load_rule_file(path)
            except PermissionConfigError as exc:
                errors.append(source)
                messages.append(str(exc))
        stores["cliArg"] = RuleSet([PermissionRule(name, "allow") for name in allowed_tools or []])
        gate = cls(
            cwd,
            stores=stores,
            flag_mode=flag_mode,
            project_trusted=project_trusted,
            responder=responder,
            load_errors=errors,
            additional_directories=additional_directories,
        )
        gate.load_error_messages = messages
        return gate

    # ----------------------------------------------------------------- mode and rules

    def _usable(self, source: Source) -> RuleSet:
        rules = self.stores[source]
        if source in ("local", "project") and not self.project_trusted:
            # An untrusted project may restrict the agent but never widen what it may do.
            return RuleSet([r for r in rules.rules if r.behavior != "allow"], None)
        return rules

    def effective_mode(self) -> PermissionMode:
        if self.flag_mode is not None:
            return self.flag_mode
        for source in MODE_SOURCES:
            mode = self._usable(source).mode
            if mode is not None:
                return mode
        return "default"

    def set_mode(self, mode: PermissionMode, source: Source = "session") -> None:
        self.stores[source].mode = mode

    def add_rule(self, rule: PermissionRule, source: Source = "session") -> None:
        self.stores[source].rules.append(rule)

    def contract(self, tool_name: str) -> ToolContract:
        return self.contracts.get(tool_name) or RUNTIME_CONTRACTS.get(tool_name, UNCLASSIFIED)

    def rule_for_call(self, tool_name: str, args: Mapping[str, Any]) -> str | None:
        contract = self.contract(tool_name)
        if contract.matcher == "path":
            return path_for_rules(_path_arg(args), self.cwd)
        if contract.matcher == "bash":
            return single_command_rule(str(args.get("command", "")))
        return None

    def _matches(self, rule: PermissionRule, tool_name: str, args: Mapping[str, Any]) -> bool:
        if not tool_name_matches(rule.tool_name, tool_name):
            return False
        if rule.rule_content is None:
            return True
        contract = self.contract(tool_name)
        if contract.matcher == "path":
            return _path_rule_matches(rule, path_for_rules(_path_arg(args), self.cwd))
        if contract.matcher == "bash":
            # Allow needs every command of the line; deny and ask hold when any command matches, and
            # for every line whose commands cannot all be named.
            command = str(args.get("command", ""))
            if rule.behavior == "allow":
                return allow_rule_matches(command, rule.rule_content)
            return deny_rule_matches(command, rule.rule_content)
        return False

    def _resolve_rule(self, tool_name: str, args: Mapping[str, Any]) -> tuple[PermissionRule, Source] | None:
        for source in SOURCES:
            matching = [r for r in self._usable(source).rules if self._matches(r, tool_name, args)]
            if matching:
                # The exact tool name beats a pattern (`mcp__github__*`), specific beats tool-wide, longer content
                # beats shorter, then lexical order.
                matching.sort(
                    key=lambda r: (
                        r.tool_name != tool_name,
                        r.rule_content is None,
                        -len(r.rule_content or ""),
                        r.rule_content or "",
                    )
                )
                return matching[0], source
        return None

    # ----------------------------------------------------------------- decisions

    def check(self, tool_name: str, args: Mapping[str, Any]) -> Decision:
        """The gate's verdict before any responder is asked."""
        if self.load_errors:
            return Decision(
                "deny",
                f"Permission configuration could not be loaded ({', '.join(self.load_errors)}); "
                f"refusing to run {tool_name}.",
            )
        if self.contract(tool_name).matcher != "path":
            return self._check_one(tool_name, args)
        args = {**args, "path": self._anchor(_path_arg(args))}
        decision = self._check_one(tool_name, args)
        # A path rule holds for the path as written and for where it really leads: the strictest verdict wins.
        for real in _real_paths(tool_name, _path_arg(args), self.cwd):
            other = self._check_one(tool_name, {**args, "path": real})
            if _STRICTNESS[other.behavior] > _STRICTNESS[decision.behavior]:
                decision = other
        if tool_name != "read" and "fs.read" in self.contract(tool_name).capabilities:
            # Whatever reading a path may not do, searching, listing or editing it may not do either.
            read = self.check("read", {"path": _path_arg(args)})
            if _STRICTNESS[read.behavior] > _STRICTNESS[decision.behavior]:
                decision = Decision(read.behavior, read.reason, decision.rule_for_call, read.source)
        return decision

    def read_denied(self, path: str) -> bool:
        """Whether a search or listing must leave `path` out: reading it would not simply be allowed."""
        predicate = self.read_filter()
        return predicate is not None and predicate(path)

    def read_filter(self) -> Callable[[str], bool] | None:
        """The predicate searching and listing tools apply to every entry, or None when no rule can deny a read.

        None lets the tools skip the filtering (and the extra listing it costs) in the common case. The predicate
        answers exactly as `check("read", ...)` would, but first tries the rules that could block a read against
        the entry's written and real path and runs the full check only when one matches: a walk asks it for
        every file.
        """
        if self.load_errors:
            return lambda _path: True
        rules = [r for source in SOURCES for r in self._usable(source).rules if r.tool_name == "read"]
        blocking = [r for r in rules if r.behavior != "allow"]
        if self.contract("read").default != "allow" or any(r.rule_content is None for r in blocking):
            return lambda path: self.check("read", {"path": path}).behavior != "allow"
        if not blocking:
            return None  # only allow rules, and reading is allowed by default: nothing can be denied
        cwd = str(self.cwd)
        real_dirs: dict[str, str] = {}

        def rule_path(absolute: str) -> str:
            if absolute == cwd:
                return "."
            return absolute[len(cwd) + 1 :] if absolute.startswith(cwd + "/") else absolute

        def denied(path: str) -> bool:
            absolute = self._anchor(path)
            parent, name = os.path.split(absolute)
            if os.path.islink(absolute):
                real = os.path.realpath(absolute)
            else:
                # Entries of one directory share its real path: resolve it once, not once per entry.
                if parent not in real_dirs:
                    real_dirs[parent] = os.path.realpath(parent)
                real = os.path.join(real_dirs[parent], name)
            candidates = {rule_path(absolute), rule_path(real)}
            if not any(_path_rule_matches(r, c) for r in blocking for c in candidates):
                return False
            return self.check("read", {"path": absolute}).behavior != "allow"

        return denied

    def _anchor(self, path: str | None) -> str:
        """The absolute path a tool will touch, spelled under the real cwd when it lies in the project.

        Tools resolve relative paths against the cwd as the session was given it, which may run through links
        (`../x` then depends on that spelling); rules are relative to the project, so a path under the given cwd is
        re-spelled under the real one, the same directory.
        """
        absolute = resolve_to_cwd(path or ".", str(self._logical_cwd))
        logical = str(self._logical_cwd)
        if logical != str(self.cwd) and (absolute == logical or absolute.startswith(logical + "/")):
            absolute = str(self.cwd) + absolute[len(logical) :]
        return absolute

    def _inside_allowed_directories(self, args: Mapping[str, Any]) -> bool:
        target = Path(resolve_to_cwd(_path_arg(args) or ".", str(self.cwd)))
        return any(
            target == root or target.is_relative_to(root)
            for root in (self.cwd, self._logical_cwd, *self.additional_directories)
        )

    def _check_one(self, tool_name: str, args: Mapping[str, Any]) -> Decision:
        contract = self.contract(tool_name)
        mode = self.effective_mode()
        rule_for_call = self.rule_for_call(tool_name, args)
        if mode == "plan" and contract.capabilities & PLAN_BLOCKED:
            return Decision("deny", f"{tool_name} is not permitted in plan mode.", rule_for_call)
        resolved = self._resolve_rule(tool_name, args)
        if resolved is not None and resolved[1] == "policy":
            return self._by_rule(tool_name, resolved, rule_for_call)
        if mode == "bypassPermissions":
            return Decision("allow", None, rule_for_call)
        if resolved is not None:
            decision = self._by_rule(tool_name, resolved, rule_for_call)
        elif mode == "plan" and contract.plan_default is not None:
            decision = Decision(contract.plan_default, None, rule_for_call)
        else:
            decision = Decision(contract.default, None, rule_for_call)
        if decision.behavior == "ask":
            if mode == "dontAsk":
                return Decision("deny", f"{tool_name} is not permitted by the current permission configuration.")
            if mode == "acceptEdits" and "fs.write" in contract.capabilities:
                # Edits are accepted inside the project (and its extra directories) only; elsewhere they ask.
                inside = contract.matcher != "path" or self._inside_allowed_directories(args)
                if inside and not contract.capabilities & EDIT_ONLY_BLOCKERS:
                    return Decision("allow", None, rule_for_call, decision.source)
        return decision

    def _by_rule(self, tool_name: str, resolved: tuple[PermissionRule, Source], rule_for_call: str | None) -> Decision:
        rule, source = resolved
        reason = None
        if rule.behavior == "deny":
            if rule.rule_content is not None:
                verb = self.contract(tool_name).verb
                noun = "commands" if self.contract(tool_name).matcher == "bash" else "paths"
                reason = f'{verb} {noun} matching "{rule.rule_content}" is denied by the {source} permission rules.'
            else:
                reason = f"{tool_name} is not permitted by the current permission configuration."
        return Decision(rule.behavior, reason, rule_for_call, source)

    async def authorize(self, tool_name: str, args: Mapping[str, Any]) -> tuple[bool, str | None]:
        """(allowed, reason when blocked), asking the responder when the verdict is `ask`."""
        decision = self.check(tool_name, args)
        if decision.behavior == "allow":
            return True, None
        if decision.behavior == "deny":
            return False, decision.reason
        if self.responder is None:
            return False, f"{tool_name} requires approval, and no responder is available in this session."
        answer = await self.responder(tool_name, args, decision.rule_for_call)
        if answer == "deny":
            return False, f"{tool_name} was declined."
        if answer == "always" and (decision.rule_for_call is not None or self.contract(tool_name).matcher == "none"):
            # A compound shell command has no single rule; "always" then allows this call only,
            # rather than widening to every command.
            self.add_rule(PermissionRule(tool_name, "allow", decision.rule_for_call), "session")
        return True, None


def tool_name_matches(pattern: str, tool_name: str) -> bool:
    """A rule's `toolName` against a tool: the same name, a glob (`mcp__github__*`), or a whole MCP server
    (`mcp__github` covers `mcp__github__<tool>`)."""
    if pattern == tool_name:
        return True
    if "*" in pattern or "?" in pattern or "[" in pattern:
        return fnmatch.fnmatchcase(tool_name, pattern)
    return pattern.startswith("mcp__") and pattern.count("__") == 1 and tool_name.startswith(pattern + "__")


def _path_rule_matches(rule: PermissionRule, rule_path: str) -> bool:
    content = rule.rule_content or ""
    if content == "~" or content.startswith("~/"):
        content = os.path.expanduser("~") + content[1:]  # `~/.ssh/**` names the home directory, as paths do
    if _glob_regex(content).match(rule_path):
        return True
    # `dir/**` denying (or asking for) everything below `dir` covers `dir` itself too, so listing or searching the
    # directory is refused outright. An allow rule is not widened this way.
    return rule.behavior != "allow" and content.endswith("/**") and rule_path == content[:-3]


def _path_arg(args: Mapping[str, Any]) -> str | None:
    value = args.get("path")
    return value if isinstance(value, str) else None


__all__ = [
    "BUILTIN_CONTRACTS",
    "PERMISSION_MODES",
    "Decision",
    "PermissionConfigError",
    "PermissionGate",
    "PermissionMode",
    "PermissionRule",
    "RUNTIME_CONTRACTS",
    "RuleSet",
    "ToolContract",
    "load_rule_file",
    "parse_rule_file",
    "path_for_rules",
    "tool_name_matches",
]
