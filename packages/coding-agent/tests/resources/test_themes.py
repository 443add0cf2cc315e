"""Theme discovery: locations and precedence, trust, `--theme`/`--no-themes`, shape checks, names, the `theme` setting."""

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from apex_coding_agent.cli.args import parse_args
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.package_manager import resolve_packages
from apex_coding_agent.resources.loader import PackageResource
from apex_coding_agent.resources.themes import (
    ThemeFlags,
    ThemeLoadResult,
    ThemeSource,
    builtin_theme_sources,
    discover_themes,
    select_theme,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def theme(path: Path, name: str, **extra: object) -> Path:
    return write(path, json.dumps({"name": name, "vars": {"blue": "#0000ff"}, "colors": {"accent": "blue"}, **extra}))


class Layout:
    def __init__(self, root: Path) -> None:
        self.agent = root / "agent"
        self.cwd = root / "project"
        self.agent.mkdir(parents=True)
        self.cwd.mkdir(parents=True)

    def settings(self, *, trusted: bool, user: object = None, project: object = None) -> SettingsManager:
        if user is not None:
            write(self.agent / "settings.json", json.dumps(user))
        if project is not None:
            write(self.cwd / ".apex-code" / "settings.json", json.dumps(project))
        return SettingsManager.create(self.cwd, self.agent, project_trusted=trusted)

    def discover(
        self, *, trusted: bool, flags: ThemeFlags | None = None, package_themes: Sequence[PackageResource] = ()
    ) -> ThemeLoadResult:
        settings = SettingsManager.create(self.cwd, self.agent, project_trusted=trusted)
        return discover_themes(
            self.cwd, self.agent, settings, project_trusted=trusted, flags=flags, package_themes=package_themes
        )


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


def summary(result: ThemeLoadResult) -> list[tuple[str, str, str]]:
    return [(t.name, t.scope, t.source) for t in result.themes]


def populate(layout: Layout, tmp_path: Path) -> None:
    theme(layout.agent / "themes" / "user-dir.json", "user-dir")
    theme(layout.agent / "extra" / "user-setting.json", "user-setting")
    theme(layout.cwd / ".apex-code" / "themes" / "project-dir.json", "project-dir")
    theme(layout.cwd / "team-themes" / "project-setting.json", "project-setting")
    theme(layout.cwd / "cli-themes" / "cli-dir.json", "cli-dir")
    theme(tmp_path / "loose.json", "cli-file")
    theme(tmp_path / "pkg" / "themes" / "from-package.json", "from-package")
    layout.settings(trusted=True, user={"themes": ["extra/user-setting.json"]}, project={"themes": ["team-themes"]})


def test_every_location_in_precedence_order(layout: Layout, tmp_path: Path) -> None:
    populate(layout, tmp_path)
    packages = [PackageResource(tmp_path / "pkg" / "themes" / "from-package.json", "pypi:apex-themes", "user")]

    result = layout.discover(
        trusted=True, flags=ThemeFlags(("cli-themes", str(tmp_path / "loose.json"))), package_themes=packages
    )

    assert summary(result) == [
        ("dark", "builtin", "builtin"),
        ("light", "builtin", "builtin"),
        ("cli-dir", "temporary", "cli"),
        ("cli-file", "temporary", "cli"),
        ("project-dir", "project", "local"),
        ("project-setting", "project", "local"),
        ("user-dir", "user", "local"),
        ("user-setting", "user", "local"),
        ("from-package", "user", "pypi:apex-themes"),
    ]
    assert result.diagnostics == []
    loaded = result.find("user-dir")
    assert loaded is not None
    assert loaded.path == layout.agent / "themes" / "user-dir.json"
    assert loaded.data == {"name": "user-dir", "vars": {"blue": "#0000ff"}, "colors": {"accent": "blue"}}
    assert result.find("dark") == ThemeSource("dark", None, None, "builtin", "builtin")


def test_untrusted_project_skips_project_dir_settings_and_packages(layout: Layout, tmp_path: Path) -> None:
    populate(layout, tmp_path)
    theme(tmp_path / "proj-pkg" / "night.json", "project-package")
    packages = [PackageResource(tmp_path / "proj-pkg" / "night.json", "git:example.com/u/t", "project")]

    result = layout.discover(trusted=False, package_themes=packages)

    assert result.names() == ["dark", "light", "user-dir", "user-setting"]


def test_no_themes_keeps_builtins_and_cli_paths(layout: Layout, tmp_path: Path) -> None:
    populate(layout, tmp_path)
    packages = [PackageResource(tmp_path / "pkg" / "themes", "pypi:apex-themes", "user")]

    result = layout.discover(trusted=True, flags=ThemeFlags(("cli-themes",), no_themes=True), package_themes=packages)

    assert result.names() == ["dark", "light", "cli-dir"]


def test_flags_come_from_the_cli_arguments() -> None:
    args = parse_args(["--theme", "a.json", "--theme", "dir", "--no-themes"])
    assert ThemeFlags.from_args(args) == ThemeFlags(("a.json", "dir"), True)


def test_malformed_files_warn_naming_the_file(layout: Layout) -> None:
    themes = layout.agent / "themes"
    cases = {
        "a-broken.json": ("{not json", "invalid theme JSON: "),
        "b-array.json": ("[]", "theme file must contain a JSON object"),
        "c-no-name.json": ('{"colors": {}}', 'theme is missing a "name" string'),
        "d-slash.json": ('{"name": "a/b", "colors": {}}', 'theme name "a/b" must not contain "/"'),
        "e-no-colors.json": ('{"name": "e"}', 'theme is missing a "colors" object'),
        "f-colors-list.json": ('{"name": "f", "colors": []}', 'theme is missing a "colors" object'),
        "g-vars.json": ('{"name": "g", "colors": {}, "vars": 3}', 'theme "vars" must be an object'),
    }
    for file_name, (text, _) in cases.items():
        write(themes / file_name, text)
    write(themes / "notes.txt", "ignored")
    write(themes / ".hidden.json", "{broken")
    theme(themes / "z-good.json", "good")

    result = layout.discover(trusted=True, flags=ThemeFlags(("missing.json",)))

    assert result.names() == ["dark", "light", "good"]
    expected = [f"{layout.cwd / 'missing.json'}: theme path does not exist"]
    expected += [f"{themes / name}: {message}" for name, (_, message) in cases.items()]
    assert [w[: len(e)] for w, e in zip(result.warnings, expected, strict=True)] == expected
    assert [d.type for d in result.diagnostics] == ["error"] + ["warning"] * len(cases)


def test_names_are_unique_first_wins_and_builtins_cannot_be_replaced(layout: Layout, tmp_path: Path) -> None:
    first = theme(layout.agent / "themes" / "ocean.json", "ocean")
    second = theme(tmp_path / "pkg" / "ocean-too.json", "ocean")
    impostor = theme(layout.agent / "themes" / "my-dark.json", "dark")
    packages = [
        PackageResource(second, "pypi:other", "user"),
        PackageResource(first, "pypi:same-file-again", "user"),  # the same file twice counts once, silently
    ]

    result = layout.discover(trusted=True, package_themes=packages)

    assert summary(result) == [
        ("dark", "builtin", "builtin"),
        ("light", "builtin", "builtin"),
        ("ocean", "user", "local"),
    ]
    assert result.warnings == [
        f'{impostor}: theme name "dark" collides with the built-in theme; keeping the first one',
        f'{second}: theme name "ocean" collides with {first}; keeping the first one',
    ]
    assert [d.type for d in result.diagnostics] == ["collision", "collision"]


def test_settings_entries_take_globs_exclusions_and_exact_overrides(layout: Layout) -> None:
    for name in ("sea", "sea-old", "sand-old", "sky"):
        theme(layout.agent / "themes" / f"{name}.json", name)
    theme(layout.agent / "more" / "forest.json", "forest")
    theme(layout.agent / "more" / "fog.json", "fog")
    layout.settings(
        trusted=True,
        user={"themes": ["more/f*.json", "!*-old.json", "+themes/sand-old.json", "-themes/sky.json"]},
    )

    result = layout.discover(trusted=True)

    assert result.names() == ["dark", "light", "sand-old", "sea", "fog", "forest"]


def test_package_themes_from_the_package_resolver(layout: Layout, tmp_path: Path) -> None:
    package = tmp_path / "theme-pack"
    theme(package / "themes" / "dusk.json", "dusk")
    write(package / "themes" / "readme.md", "not a theme")
    settings = layout.settings(trusted=True, user={"packages": [str(package)]})
    resolved = resolve_packages(settings, layout.agent, layout.cwd, True, install_missing=False)

    result = discover_themes(
        layout.cwd, layout.agent, settings, project_trusted=True, package_themes=resolved.loader_resources("themes")
    )

    assert summary(result)[2:] == [("dusk", "user", str(package))]


def test_theme_setting_selects_a_known_theme(layout: Layout) -> None:
    theme(layout.agent / "themes" / "ocean.json", "ocean")
    result = layout.discover(trusted=True)

    ocean = select_theme("ocean", result)
    assert ocean.theme.path == layout.agent / "themes" / "ocean.json"
    assert ocean.warning is None
    assert select_theme("light", result).theme == builtin_theme_sources()[1]
    unset = select_theme(None, result)
    assert (unset.theme.name, unset.warning_line) == ("dark", None)


@pytest.mark.parametrize("name", ["apex", "nope", "ocean/x"])
def test_unknown_theme_setting_falls_back_to_dark_with_a_warning(name: str) -> None:
    choice = select_theme(name, builtin_theme_sources())

    assert choice.theme.name == "dark"
    assert choice.warning_line == f'Warning: Theme "{name}" not found; using "dark"'


def test_a_non_string_theme_setting_falls_back_to_dark_with_a_warning() -> None:
    choice = select_theme(3, builtin_theme_sources())

    assert choice.theme.name == "dark"
    assert choice.warning_line == 'Warning: Setting "theme" must be a theme name; using "dark"'
