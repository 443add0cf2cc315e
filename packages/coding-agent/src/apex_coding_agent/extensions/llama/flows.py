"""The long-running parts of `/llama`: waiting on a load or download that Escape can stop
(after a confirmation), and the Hugging Face download flow (search, gating warning, quantization choice).

Waiting shows a dialog (`ctx.ui.select` with one `Keep waiting` option) that closes itself through its abort signal
when the work ends. Escape answers the dialog with None; the user then confirms stopping, and the router is told to
unload the model (which ends a load or a download). Model files are never deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from apex_ai.abort import AbortController
from apex_coding_agent.extensions.llama.client import LlamaClient, RouterEvent
from apex_coding_agent.extensions.llama.hub import HubClient, HubError, format_bytes, is_repo_spec, split_repo_spec

WAIT_OPTION = "Keep waiting"
CONTINUE = "Continue"
BACK = "Back"
RECOMMENDED_QUANT = "Q4_K_M"
STATUS_KEY = "llama.cpp"
SEARCH_TITLE = "Download model: search Hugging Face or enter owner/repository[:quant]"

HubFactory = Callable[[], HubClient]


async def wait_or_stop(
    ctx: Any,  # Any: ExtensionCommandContext
    title: str,
    model: str,
    work: Awaitable[Any],
    stop: Callable[[], Awaitable[Any]],
) -> bool:
    """Run `work` under a waiting dialog; True when it finished, False when the user stopped it (`stop` ran).

    Errors of `work` propagate. Declining the confirmation shows the dialog again.
    """
    task: asyncio.Future[Any] = asyncio.ensure_future(work)
    try:
        while True:
            finished = AbortController()
            task.add_done_callback(_aborter(finished))
            dialog = asyncio.ensure_future(
                ctx.ui.select(f"{title} {model} (Escape to stop)", [WAIT_OPTION], signal=finished.signal)
            )
            await asyncio.wait({task, dialog}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                finished.abort()
                with contextlib.suppress(Exception):
                    await dialog
                task.result()
                return True
            if dialog.result() is not None:
                continue
            if not await ctx.ui.confirm(f"Stop {title.lower()}?", model):
                continue
            if task.done():  # it ended while the user was deciding
                task.result()
                return True
            task.cancel()
            await stop()
            return False
    finally:
        if not task.done():
            task.cancel()
        ctx.ui.set_status(STATUS_KEY, None)


def _aborter(controller: AbortController) -> Callable[[asyncio.Future[Any]], None]:
    def abort(_task: asyncio.Future[Any]) -> None:
        controller.abort()

    return abort


def _compact(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return str(count)


def _quant_label(name: str, size: int | None) -> str:
    parts = [name]
    if size is not None:
        parts.append(format_bytes(size))
    if name == RECOMMENDED_QUANT:
        parts.append("recommended")
    return " · ".join(parts)


async def choose_download(ctx: Any, hub: HubClient) -> str | None:  # Any: ExtensionCommandContext
    """Ask which repository (and quantization) to download; the router spec `owner/repo[:QUANT]` or None."""
    query = await ctx.ui.input(SEARCH_TITLE, "qwen2.5 7b instruct")
    if query is None or not query.strip():
        return None
    query = query.strip()
    if is_repo_spec(query):
        repo, quant = split_repo_spec(query)
    else:
        results = await hub.search(query)
        if not results:
            ctx.ui.notify(f'No GGUF models found for "{query}"', "warning")
            return None
        labels = [f"{m.id} · {_compact(m.downloads)} downloads" for m in results]
        choice = await ctx.ui.select(f"Hugging Face: {query}", labels)
        if choice is None:
            return None
        repo, quant = results[labels.index(choice)].id, None
    details = await hub.details(repo)
    if details.gated:
        how = "needs manual approval" if details.gated == "manual" else "asks you to accept its access terms"
        title = (
            f"{details.id} is gated: it {how} at https://huggingface.co/{details.id}. "
            "The llama.cpp server needs an HF_TOKEN with access."
        )
        if await ctx.ui.select(title, [CONTINUE, BACK]) != CONTINUE:
            return None
    if quant is None and details.quantizations:
        labels = [_quant_label(q.name, q.size) for q in details.quantizations]
        choice = await ctx.ui.select(f"Quantization of {details.id}", labels)
        if choice is None:
            return None
        quant = details.quantizations[labels.index(choice)].name
    return f"{details.id}:{quant}" if quant else details.id


def _progress_text(spec: str, event: RouterEvent) -> str | None:
    data = event.data if isinstance(event.data, dict) else {}
    done, total = data.get("downloaded"), data.get("total")
    if event.event == "download_progress" and isinstance(done, int) and isinstance(total, int) and total > 0:
        return f"Downloading {spec}: {done * 100 // total}%"
    return None


async def download_flow(ctx: Any, client: LlamaClient, hub_factory: HubFactory) -> bool:  # Any: command ctx
    """`Download model…`: True when a download finished (the catalog should be refreshed)."""
    hub = hub_factory()
    try:
        spec = await choose_download(ctx, hub)
    except HubError as exc:
        ctx.ui.notify(f"Hugging Face: {exc}", "error")
        return False
    finally:
        await hub.aclose()
    if spec is None:
        return False

    def on_event(event: RouterEvent) -> None:
        text = _progress_text(spec, event)
        if text is not None:
            ctx.ui.set_status(STATUS_KEY, text)

    async def stop() -> None:
        # The router ends a download when asked to unload the model; the files it wrote stay.
        await client.request_unload(spec)
        ctx.ui.notify(f"Stopped downloading {spec}", "info")

    if not await wait_or_stop(ctx, "Downloading", spec, client.download_and_wait(spec, on_event), stop):
        return False
    ctx.ui.notify(f"Downloaded {spec}", "info")
    return True


__all__ = ["SEARCH_TITLE", "WAIT_OPTION", "choose_download", "download_flow", "wait_or_stop"]
