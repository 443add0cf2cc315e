"""settings-and-trust.md §6: what needs trust, and the decision order."""

import json
from pathlib import Path

import pytest

from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.core.trust import (
    TrustFileError,
    TrustHandlerResult,
    TrustStore,
    resolve_project_trusted,
    trust_requiring_resources,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "work" / "proj"
    (cwd / ".apex-code").mkdir(parents=True)
    (cwd / ".apex-code" / "settings.json").write_text(json.dumps({"theme": "project-theme"}))
    return cwd


def test_agents_md_alone_needs_no_trust(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("be nice")
    store = TrustStore(tmp_path / "trust.json")
    assert trust_requiring_resources(tmp_path, home=tmp_path / "home") == []
    assert resolve_project_trusted(tmp_path, store, home=tmp_path / "home").reason == "no-resources"


def test_agents_skills_in_an_ancestor_needs_trust_but_not_in_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".agents" / "skills").mkdir(parents=True)
    cwd = home / "code"
    cwd.mkdir()
    assert trust_requiring_resources(cwd, home=home) == []
    (tmp_path / ".agents" / "skills").mkdir(parents=True)
    assert trust_requiring_resources(cwd, home=home) == [(tmp_path / ".agents" / "skills").resolve()]


def test_print_mode_without_decision_is_untrusted_and_settings_ignored(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "agent" / "trust.json")
    decision = resolve_project_trusted(project, store, home=tmp_path / "home")
    assert (decision.trusted, decision.reason) == (False, "no-ui")
    settings = SettingsManager.create(project, tmp_path / "agent", project_trusted=decision.trusted)
    assert settings.get("theme") is None


def test_approve_flag_trusts_without_saving(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    assert resolve_project_trusted(project, store, approve=True).trusted is True
    assert resolve_project_trusted(project, store, approve=False).trusted is False
    assert not store.path.exists()


def test_saved_parent_decision_applies(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    store.save({project.parent: True})
    decision = resolve_project_trusted(project, store, home=tmp_path / "home")
    assert (decision.trusted, decision.reason) == (True, "saved")
    settings = SettingsManager.create(project, tmp_path / "agent", project_trusted=decision.trusted)
    assert settings.get("theme") == "project-theme"
    text = store.path.read_text()
    assert text.endswith("\n") and json.loads(text) == {str(project.parent.resolve()): True}


def test_extension_handler_decides_and_remembers(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    asked: list[Path] = []

    def prompt(cwd: Path) -> None:
        asked.append(cwd)

    decision = resolve_project_trusted(
        project,
        store,
        handlers=[lambda cwd: TrustHandlerResult("undecided"), lambda cwd: TrustHandlerResult("no", remember=True)],
        prompt=prompt,
        home=tmp_path / "home",
    )
    assert (decision.trusted, decision.reason) == (False, "extension")
    assert asked == []
    assert json.loads(store.path.read_text()) == {str(project.resolve()): False}


def test_broken_handler_is_a_warning(project: Path, tmp_path: Path) -> None:
    warnings: list[str] = []

    def broken(cwd: Path) -> TrustHandlerResult:
        raise RuntimeError("boom")

    decision = resolve_project_trusted(
        project, TrustStore(tmp_path / "t.json"), handlers=[broken], warn=warnings.append, home=tmp_path / "home"
    )
    assert decision.trusted is False
    assert warnings == ["project_trust handler error: boom"]


def test_default_project_trust_setting(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    assert resolve_project_trusted(project, store, default_trust="always", home=tmp_path / "h").trusted is True
    assert resolve_project_trusted(project, store, default_trust="never", home=tmp_path / "h").trusted is False


def test_prompt_choice_trust_parent_saves_parent_and_clears_cwd(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    decision = resolve_project_trusted(project, store, prompt=lambda cwd: "trust_parent", home=tmp_path / "h")
    assert decision.trusted is True
    assert json.loads(store.path.read_text()) == {str(project.parent.resolve()): True, str(project.resolve()): None}


def test_invalid_trust_file_is_an_error(project: Path, tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    store.path.write_text('{"x": "yes"}')
    with pytest.raises(TrustFileError):
        resolve_project_trusted(project, store, home=tmp_path / "h")
