"""`run_interactive(argv)`: first frame, trust prompt, runtime, main loop, shutdown.

This module is light (urwid and this package's widgets): the first frame is drawn before the coding-agent runtime
and the app module are imported, which is most of a start.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import urwid

from apex_coding_agent import collector_paused
from apex_tui.app._log_notices import TranscriptLogHandler, transcript_logging
from apex_tui.app._picker import Choice, Picker
from apex_tui.app._screen import AppScreen, input_filter, stdout_is_tty, tmux_keys_notice
from apex_tui.app._startup_frame import paint_startup_frame
from apex_tui.keybindings import KeybindingManager, load_keybindings
from apex_tui.theme import builtin_theme

HANGUP_EXIT = 129
EXIT_SIGNALS = {signal.SIGTERM: 143, signal.SIGHUP: HANGUP_EXIT}
"""Signals that end the app cleanly (terminal restored) with 128 + the signal number."""


def _title_writer() -> Callable[[str], None]:
    def write(title: str) -> None:
        # OSC 0 sets the window title; control characters in a session name must not end the sequence early.
        clean = "".join(ch for ch in title if ch.isprintable())
        try:
            sys.stdout.write(f"\x1b]0;{clean}\x07")
            sys.stdout.flush()
        except OSError:
            pass

    return write


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


def trust_choices(cwd: Path) -> list[Choice]:
    """The five options."""
    return [
        Choice("Trust", "trust"),
        Choice(f"Trust parent folder ({cwd.parent})", "trust_parent"),
        Choice("Trust (this session only)", "trust_session"),
        Choice("Do not trust", "deny"),
        Choice("Do not trust (this session only)", "deny_session"),
    ]


TRUST_EXPLANATION = (
    "This folder has project configuration (.apex-code settings, extensions, skills, prompts or themes).\n"
    "Trusting it lets that configuration change what the agent does."
)


def ask_trust(screen: urwid.BaseScreen, keymap: KeybindingManager, cwd: Path) -> str | None:
    """Show the trust selector in its own short main loop; None when dismissed."""
    title = f"Trust project folder?\n{cwd}\n\n{TRUST_EXPLANATION}"
    picker = Picker(keymap, title, trust_choices(cwd), filterable=False)
    answer: list[str | None] = [None]

    def chosen(_picker: Picker, value: Any) -> None:
        answer[0] = str(value)
        raise urwid.ExitMainLoop()

    def dismissed(_picker: Picker) -> None:
        raise urwid.ExitMainLoop()

    urwid.connect_signal(picker, "select", chosen)
    urwid.connect_signal(picker, "cancel", dismissed)
    body = urwid.Filler(picker, valign="bottom")
    loop = urwid.MainLoop(body, palette=builtin_theme("dark").palette(), screen=screen, input_filter=input_filter)  # type: ignore[arg-type]
    loop.run()
    return answer[0]


def freeze_startup_heap() -> None:
    """Exclude every object alive now (session messages, transcript blocks, modules) from later full collections.

    With a 50k-entry session loaded, each full (generation 2) garbage collection walks millions of objects and
    stalls the UI for ~0.6 s while a reply streams (bench_tui_app.py); frozen objects are skipped, leaving pauses
    proportional to what the run itself allocates. `gc.freeze()` only relinks lists, so it costs nothing before the
    first frame. Startup garbage that is only reachable through cycles stays allocated: a bounded, one-time cost.
    """
    gc.freeze()


def run_interactive(argv: Sequence[str]) -> int:
    """Run the terminal app; returns the process exit code."""
    from apex_coding_agent import get_agent_dir, parse_args

    args = parse_args(list(argv))
    if args.errors:
        _err("\n".join(f"Error: {e}" for e in args.errors))
        return 1
    cwd = os.getcwd()
    agent_dir = Path(get_agent_dir())

    def keymap_loader() -> Any:
        return load_keybindings(agent_dir)

    fullscreen = args.tui_mode == "fullscreen"
    screen = AppScreen(fullscreen=fullscreen)
    paint_startup_frame(screen, keymap_loader().manager, cwd)
    # Log records go to the transcript while the screen is ours (stderr would draw over it); what the app never
    # showed is printed once the terminal is restored.
    with transcript_logging() as log_handler:
        try:
            return _run_app(args, screen, cwd, agent_dir, keymap_loader, log_handler)
        finally:
            if screen.started:
                screen.stop()


def _after_first_frame(main_loop: urwid.MainLoop, callback: Callable[[], None]) -> None:
    """Run `callback` once the main loop has drawn its first frame.

    `MainLoop.run` queues that draw as a zero-delay alarm when it starts; an alarm queued now runs before it, so
    it queues the callback behind the draw.
    """
    main_loop.set_alarm_in(0, lambda *_: main_loop.set_alarm_in(0, lambda *_: callback()))


def _run_app(
    args: Any,
    screen: AppScreen,
    cwd: str,
    agent_dir: Path,
    keymap_loader: Callable[[], Any],
    log_handler: TranscriptLogHandler,
) -> int:
    # Any: `Args` and the keymap loader's result are typed in apex_coding_agent / the app, imported only now.
    from apex_ai.api_registry import hold_preloads, preload_api
    from apex_coding_agent import ThemeFlags, __version__
    from apex_tui.app._app import InteractiveApp
    from apex_tui.app._rewind_flow import announce_pending_restore
    from apex_tui.app._startup import StartupError, build_startup

    fullscreen = args.tui_mode == "fullscreen"

    def prompt(root: Path) -> Any:
        # Any: the answer is one of the TrustChoice literals, checked by resolve_project_trusted.
        return ask_trust(screen, keymap_loader().manager, root)

    aio_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(aio_loop)
    # Building the session selects its model, which would start the SDK import thread now; that import then competes
    # with the rest of the start-up (and `-r`'s session list) for the GIL. Held until the first frame is drawn.
    release_preloads = hold_preloads()
    # Opening a session allocates an object graph per message and almost no garbage; the collector walking it
    # again and again doubled the time to the first frame of a 50k-entry session (2.9 s -> 1.1 s to open it with
    # collection paused, bench_tui_app.py). Collection resumes, with the start-up heap frozen, before the loop runs.
    with collector_paused():
        try:
            # Trust is asked inside (after extensions' `project_trust` handlers), with the selector on `screen`.
            startup = aio_loop.run_until_complete(
                build_startup(args, cwd=cwd, agent_dir=agent_dir, trust_prompt=prompt)
            )
        except StartupError as exc:
            if screen.started:
                screen.stop()  # the terminal back to normal before the message
            _err(str(exc))
            aio_loop.close()
            return 1
        if fullscreen is False and args.tui_mode is None:
            # The settings (project ones once trusted) may ask for fullscreen when the flag does not.
            fullscreen = startup.settings.get("tuiMode") == "fullscreen"
            if fullscreen and screen.started:
                # The startup frame went to the main buffer; the main loop starts the screen again on the alternate one.
                screen.stop()
            screen.fullscreen = fullscreen
        quiet = bool(startup.settings.get("quietStartup"))
        app = InteractiveApp(
            startup.runtime,
            keymap_loader=keymap_loader,
            cwd=cwd,
            agent_dir=agent_dir,
            warnings=startup.warnings,
            fullscreen=fullscreen,
            version=__version__,
            quiet=quiet,
            verbose=args.verbose,
            theme_flags=ThemeFlags.from_args(args),
        )
        app.root.fullscreen = fullscreen
        log_handler.attach(app.notify, aio_loop)  # records from the start-up (a corrupt session line) show first
        main_loop = app.make_main_loop(screen, aio_loop)
        app.title_sink = _title_writer()
        app.update_title()
        # `session_start` is emitted by the app once the main loop runs (`make_main_loop`): a handler may open a
        # dialog, which only the running loop can answer. Handler errors arrive as error lines (`runner.on_error`).
        if args.messages:
            main_loop.set_alarm_in(0, lambda *_: app.submit(" ".join(args.messages), follow_up=False))
        main_loop.set_alarm_in(0, lambda *_: announce_pending_restore(app))
        if startup.resume_picker:
            from apex_tui.app._sessions_flow import open_resume

            main_loop.set_alarm_in(0, lambda *_: open_resume(app))

        # Asking tmux for its extended-keys option runs a process: in a thread, once the app is on screen.
        def warn_about_keys() -> None:
            app.spawn(_tmux_keys_warning(app))

        _after_first_frame(main_loop, warn_about_keys)
        model = startup.runtime.session.model

        def preload() -> None:
            # The provider SDK (hundreds of ms) imports in a thread once the app is on screen (with `-r`, the
            # session list: it opens before the first frame), not before it.
            release_preloads()
            if model is not None:
                preload_api(model.api)

        _after_first_frame(main_loop, preload)
        for signum, code in EXIT_SIGNALS.items():
            aio_loop.add_signal_handler(signum, app.request_exit, code)
        freeze_startup_heap()
    try:
        main_loop.run()
    except OSError:
        # SIGHUP: the terminal is gone, restoring it fails with EIO; leave without further terminal writes.
        if app.exit_code != HANGUP_EXIT:
            raise
    finally:
        log_handler.detach()  # the loop stops taking callbacks: later records wait for stderr
        for signum in EXIT_SIGNALS:
            aio_loop.remove_signal_handler(signum)
        session = app.runtime.session
        persisted = session.session_file is not None and Path(session.session_file).exists()
        session_id = session.session_id
        aio_loop.run_until_complete(_shutdown(app))
        aio_loop.close()
    if persisted and app.exit_code != HANGUP_EXIT and stdout_is_tty():
        extra = f" --session-dir {args.session_dir}" if args.session_dir else ""
        # The last frame stays on screen with the cursor below it (`AppScreen._stop`; after fullscreen, the shell's
        # screen comes back as it was).
        sys.stdout.write(f"To resume this session: apex-code --session {session_id}{extra}\n")
    return app.exit_code


async def _tmux_keys_warning(app: Any) -> None:
    # Any: the app type is imported lazily above to keep this module light.
    notice = await asyncio.to_thread(tmux_keys_notice, dict(os.environ))
    if notice is not None:
        app.notify(notice, "warning")


async def _shutdown(app: Any) -> None:
    # Any: the app type is imported lazily above to keep this module light.
    session = app.runtime.session
    if session.is_streaming:
        await session.abort()
    for task in list(app.tasks):
        task.cancel()
    await app.runtime.dispose()
