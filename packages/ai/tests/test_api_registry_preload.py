"""`preload_api`: the import of a built-in API starts in a daemon thread, and `get_api` reuses it."""

from __future__ import annotations

import subprocess
import sys
import threading

from apex_ai.api_registry import ApiStreamFn, get_api, preload_api, register_api, unregister_api
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.types import Context, Model


def test_preload_then_get_api_return_the_module_function() -> None:
    preload_api("openai-completions")
    preload_api("openai-completions")  # idempotent: no second import, no error
    fn = get_api("openai-completions")

    from apex_ai.providers.openai_completions import stream_openai_completions

    assert fn is stream_openai_completions
    assert "openai" in sys.modules
    assert get_api("openai-completions") is fn


def test_get_api_called_while_preloads_run_in_other_threads_gets_one_function() -> None:
    callers = 6
    barrier = threading.Barrier(callers)
    results: list[ApiStreamFn | None] = []
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            barrier.wait(timeout=5)
            preload_api("openai-responses")
            results.append(get_api("openai-responses"))
        except BaseException as exc:  # collected: an exception in a thread would otherwise be lost
            errors.append(exc)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    from apex_ai.providers.openai_responses import stream_openai_responses

    assert errors == []
    assert results == [stream_openai_responses] * callers


def test_preload_of_an_unknown_or_registered_api_starts_nothing() -> None:
    async def custom(
        model: Model,
        context: Context,
        options: StreamOptions | SimpleStreamOptions,
        out: AssistantMessageEventStream,
        api_key: str | None,
    ) -> None:
        out.end()

    before = {t.name for t in threading.enumerate()}
    preload_api("no-such-api")
    register_api("preload-custom", custom)
    try:
        preload_api("preload-custom")
        assert get_api("preload-custom") is custom
    finally:
        unregister_api("preload-custom")
    assert get_api("no-such-api") is None
    started = {t.name for t in threading.enumerate()} - before
    assert not any(name.startswith("apex-ai-preload-") for name in started)


def test_import_apex_ai_imports_no_sdk_and_a_running_preload_does_not_hold_up_exit() -> None:
    # jsonschema too: it is imported on the first tool-argument check, not at start-up.
    probe = (
        "import sys, threading, apex_ai\n"
        "from apex_ai.api_registry import preload_api\n"
        "print(','.join(m for m in ('anthropic', 'openai', 'jsonschema') if m in sys.modules) or '-')\n"
        "preload_api('anthropic-messages')\n"
        "t = [t for t in threading.enumerate() if t.name == 'apex-ai-preload-anthropic-messages']\n"
        "print(len(t), t[0].daemon)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == ["-", "1 True"]


def test_held_preloads_start_only_on_release_and_get_api_still_works_meanwhile() -> None:
    # A fresh process: which preload threads start is process-wide state.
    probe = (
        "import sys\n"
        "from apex_ai import api_registry\n"
        "from apex_ai.api_registry import get_api, hold_preloads, preload_api\n"
        "def started():  # the preload threads ever started (a finished one stays listed)\n"
        "    return sorted(api_registry._preloads)\n"
        "release = hold_preloads()\n"
        "assert hold_preloads()() is None  # a nested hold's release ends nothing\n"
        "preload_api('openai-responses'); preload_api('openai-responses'); preload_api('anthropic-messages')\n"
        "print(started() or '-', 'openai' in sys.modules)\n"
        "fn = get_api('faux')  # needed meanwhile: imported here, held or not\n"
        "print(fn.__name__)\n"
        "release(); release()\n"
        "print(started())\n"
        "preload_api('openai-completions')  # no longer held\n"
        "print('openai-completions' in started())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == [
        "- False",
        "stream_faux",
        "['anthropic-messages', 'openai-responses']",
        "True",
    ]
