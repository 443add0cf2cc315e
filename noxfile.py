"""Every check of the repository: `uv run nox` runs lint, typecheck, layers and the tests of each package.

Each package's tests run in a venv of their own that holds only that package, its declared
dependencies and the test tools, so a layer that quietly needs a higher one fails here.
"""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["lint", "typecheck", "layers", "wheels", "tests", "ray"]
nox.options.reuse_venv = "yes"

PACKAGES = {
    "ai": "apex-ai",
    "agent": "apex-agent",
    "coding-agent": "apex-coding-agent",
    "tui": "apex-tui",
}
SOURCES = [f"packages/{folder}/src" for folder in PACKAGES]


def _sync(session: nox.Session, *args: str) -> None:
    """Install locked dependencies into the session's own venv (not the workspace .venv)."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--inexact",
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff: lint rules and formatting."""
    _sync(session, "--all-packages", "--only-group", "dev")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over every package's sources."""
    _sync(session, "--all-packages")
    session.run("mypy", *SOURCES)


@nox.session
def layers(session: nox.Session) -> None:
    """import-linter: ai <- agent <- coding-agent <- tui, no upward import."""
    _sync(session, "--all-packages")
    session.run("lint-imports")
    # The contract must also bite: a deliberate upward import makes lint-imports fail.
    session.run("python", "scripts/check_layer_contract_bites.py")


@nox.session(venv_backend="none")
def wheels(session: nox.Session) -> None:
    """Every package builds a wheel whose sibling dependencies carry version ranges."""
    out = session.create_tmp()
    session.run("uv", "build", "--all-packages", "--wheel", "-o", out, "-q")
    session.run("python3", "scripts/check_wheels.py", out)


@nox.session
@nox.parametrize("package", list(PACKAGES))
def tests(session: nox.Session, package: str) -> None:
    """The tests of one package, in a venv with only that package and what it declares."""
    _sync(session, "--package", PACKAGES[package], "--group", "test")
    env = _bytecode_env(session)
    if os.environ.get("CI"):
        env["CI"] = "1"
    workers = os.environ.get("APEX_TEST_WORKERS", "auto")
    # worksteal: a worker that runs out of tests takes queued ones from a busy worker, so a few long tests at the end
    # of one worker's share do not leave the other core idle.
    args = ["-n", workers, "--dist", "worksteal"]
    session.run("pytest", f"packages/{package}/tests", "-q", *args, *session.posargs, env=env)


def _bytecode_env(session: nox.Session) -> dict[str, str | None]:
    """Bytecode is cached in the session's venv, never in the source tree.

    Most tests start the CLI as a subprocess; without a cache each one recompiles the SDKs and our own sources
    (about a second of CPU per start). PYTHONDONTWRITEBYTECODE (set by some shells) is lifted for the same reason.
    """
    return {
        "PYTHONDONTWRITEBYTECODE": None,
        "PYTHONPYCACHEPREFIX": os.path.join(session.virtualenv.location, "pycache"),
    }


@nox.session
def llama(session: nox.Session) -> None:
    """The CLI against a real llama.cpp server (not part of the default run: the first build takes minutes).

    `scripts/build_llama_server.py` builds `llama-server` from the llama-cpp-python sdist once per machine
    (cached under ~/.cache/apex-code); the tests write tiny random-weight models with the `gguf` package.
    """
    _sync(session, "--all-packages", "--group", "dev")
    session.install("gguf", "numpy", "pip")  # pip fetches the llama-cpp-python sdist (uv venvs come without it)
    binary = session.run("python", "scripts/build_llama_server.py", silent=True, external=False)
    assert isinstance(binary, str)
    env = {"APEX_LLAMA_SERVER": binary.strip().splitlines()[-1], **_bytecode_env(session)}
    session.run("pytest", "packages/coding-agent/tests_llama", "-q", *session.posargs, env=env)


@nox.session
def ray(session: nox.Session) -> None:
    """Batch runs on a local Ray runtime: the same 20 tasks as the local pool, the same summary.

    Ray is the ~200 MB extra `apex-coding-agent[ray]`, so it gets a venv of its own instead of weighing on every
    package's test venv; its tests live in `tests_ray/` and fail (never skip) when Ray is missing.
    """
    _sync(session, "--package", "apex-coding-agent", "--extra", "ray", "--group", "test")
    session.run("pytest", "packages/coding-agent/tests_ray", "-q", *session.posargs, env=_bytecode_env(session))


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: print figures (not part of the default run)."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--all-packages",
        "--compile-bytecode",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )
    for script in sorted(os.listdir("benchmarks")):
        if script.startswith("bench_") and script.endswith(".py"):
            session.run("python", f"benchmarks/{script}", *session.posargs)
