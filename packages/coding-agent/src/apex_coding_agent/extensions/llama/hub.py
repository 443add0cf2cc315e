"""Hugging Face lookups for `/llama` → `Download model…`.

`HubClient` searches GGUF repositories (`GET /api/models?search=Q&filter=gguf&sort=downloads&direction=-1&limit=20`)
and reads one repository's files (`GET /api/models/<id>?blobs=true`) to offer its quantizations. The hub address is
a constructor argument so tests aim it at a local stub; nothing here downloads model files (the router does).

`find_hf_token` looks for a token the way the Hugging Face tools do: `HF_TOKEN`, the file named by
`HF_TOKEN_PATH`, `$HF_HOME/token`, `$XDG_CACHE_HOME/huggingface/token`, then `~/.cache/huggingface/token`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx2

HF_BASE_URL: Final = "https://huggingface.co"
SEARCH_LIMIT: Final = 20
REQUEST_TIMEOUT_S: Final = 15.0

# A repository spec as the router takes it: `owner/repo` or `owner/repo:QUANT` (no spaces).
_REPO_SPEC = re.compile(r"^[^/\s]+/[^:\s]+(?::[^\s:]+)?$")
# The quantization tag inside a GGUF file name, e.g. `Q4_K_M`, `IQ2_XS`, `Q8_0`, `F16`, `BF16`.
_QUANT = re.compile(r"(?:^|[-_.])((?:I?Q\d+(?:_[A-Z0-9]+)*)|BF16|F16|F32)$", re.IGNORECASE)
_SPLIT_SUFFIX = re.compile(r"-\d{5}-of-\d{5}$")


class HubError(Exception):
    """A hub request failed; the message is meant for the user."""


@dataclass(frozen=True)
class HubModel:
    """One search result."""

    id: str
    downloads: int = 0


@dataclass(frozen=True)
class HubQuant:
    """One quantization of a repository: its tag, total size of its files (split files summed) and the files."""

    name: str
    size: int | None
    files: tuple[str, ...]


@dataclass(frozen=True)
class HubDetails:
    """A repository's id, its gating (`False`, `"auto"` or `"manual"`) and its quantizations in file order."""

    id: str
    gated: bool | str = False
    quantizations: tuple[HubQuant, ...] = field(default_factory=tuple)


def is_repo_spec(text: str) -> bool:
    """True when `text` names a repository directly (`owner/repo[:quant]`) rather than being a search query."""
    return bool(_REPO_SPEC.match(text))


def split_repo_spec(spec: str) -> tuple[str, str | None]:
    """`owner/repo:Q4_K_M` → `("owner/repo", "Q4_K_M")`; without a quantization the second item is None."""
    slash = spec.find("/")
    colon = spec.find(":", slash + 1)
    return (spec, None) if colon < 0 else (spec[:colon], spec[colon + 1 :])


def quant_of(file_name: str) -> str | None:
    """The quantization tag of a `.gguf` file name (upper-cased), or None (not GGUF, projector, no tag)."""
    base = file_name.rsplit("/", 1)[-1]
    if not base.lower().endswith(".gguf") or base.lower().startswith("mmproj"):
        return None
    stem = _SPLIT_SUFFIX.sub("", base[: -len(".gguf")])
    match = _QUANT.search(stem)
    return match.group(1).upper() if match else None


def quantizations(siblings: list[Mapping[str, Any]]) -> tuple[HubQuant, ...]:  # Any: hub JSON
    """Group a repository's files by quantization tag, in the order the tags first appear."""
    names: dict[str, list[str]] = {}
    sizes: dict[str, int | None] = {}
    for sibling in siblings:
        file_name = sibling.get("rfilename")
        if not isinstance(file_name, str):
            continue
        tag = quant_of(file_name)
        if tag is None:
            continue
        names.setdefault(tag, []).append(file_name)
        size = sibling.get("size")
        previous = sizes.get(tag, 0)
        # One file without a size makes the total unknown rather than too small.
        sizes[tag] = previous + size if isinstance(size, int) and previous is not None else None
    return tuple(HubQuant(tag, sizes[tag], tuple(files)) for tag, files in names.items())


def format_bytes(size: int) -> str:
    """`4_368_439_584` → `4.1 GB` (binary multiples, one decimal from KB up)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def find_hf_token(env: Mapping[str, str] | None = None, home: Path | None = None) -> str | None:
    """The first non-empty token of the lookup order in the module docstring, or None."""
    environ = os.environ if env is None else env
    token = environ.get("HF_TOKEN", "").strip()
    if token:
        return token
    home_dir = home if home is not None else Path.home()
    candidates: list[Path] = []
    if environ.get("HF_TOKEN_PATH"):
        candidates.append(Path(environ["HF_TOKEN_PATH"]).expanduser())
    if environ.get("HF_HOME"):
        candidates.append(Path(environ["HF_HOME"]).expanduser() / "token")
    if environ.get("XDG_CACHE_HOME"):
        candidates.append(Path(environ["XDG_CACHE_HOME"]).expanduser() / "huggingface" / "token")
    candidates.append(home_dir / ".cache" / "huggingface" / "token")
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text:
            return text
    return None


class HubClient:
    """Search and repository details. Pass `http_client` to inject one (the caller closes it)."""

    def __init__(
        self, base_url: str = HF_BASE_URL, token: str | None = None, *, http_client: httpx2.AsyncClient | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._owns_client = http_client is None
        self._client = http_client or httpx2.AsyncClient(timeout=REQUEST_TIMEOUT_S)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def _get(self, path: str, params: Mapping[str, str | int]) -> Any:  # Any: hub JSON
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            response = await self._client.get(
                f"{self.base_url}{path}", params=dict(params), headers=headers, timeout=REQUEST_TIMEOUT_S
            )
        except httpx2.TransportError as exc:
            raise HubError(f"Cannot reach Hugging Face at {self.base_url}: {exc}") from exc
        if response.status_code in (401, 403):
            raise HubError(f"Hugging Face refused access (HTTP {response.status_code}); set HF_TOKEN")
        if response.status_code == 404:
            raise HubError("Hugging Face does not know this repository")
        if response.status_code >= 400:
            raise HubError(f"Hugging Face returned HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError as exc:
            raise HubError("Hugging Face returned invalid JSON") from exc

    async def search(self, query: str) -> list[HubModel]:
        """GGUF repositories matching `query`, most downloaded first."""
        params: dict[str, str | int] = {
            "search": query,
            "filter": "gguf",
            "sort": "downloads",
            "direction": -1,
            "limit": SEARCH_LIMIT,
        }
        data = await self._get("/api/models", params)
        if not isinstance(data, list):
            raise HubError("Hugging Face returned no model list")
        out: list[HubModel] = []
        for item in data:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                downloads = item.get("downloads")
                out.append(HubModel(item["id"], downloads if isinstance(downloads, int) else 0))
        return out

    async def details(self, repo_id: str) -> HubDetails:
        """The repository's gating and quantizations (`blobs=true` gives the file sizes)."""
        data = await self._get(f"/api/models/{repo_id}", {"blobs": "true"})
        if not isinstance(data, dict):
            raise HubError("Hugging Face returned no repository details")
        siblings = data.get("siblings")
        gated = data.get("gated", False)
        return HubDetails(
            id=data["id"] if isinstance(data.get("id"), str) else repo_id,
            gated=gated if isinstance(gated, bool | str) else False,
            quantizations=quantizations(
                [s for s in siblings if isinstance(s, dict)] if isinstance(siblings, list) else []
            ),
        )


__all__ = [
    "HF_BASE_URL",
    "HubClient",
    "HubDetails",
    "HubError",
    "HubModel",
    "HubQuant",
    "find_hf_token",
    "format_bytes",
    "is_repo_spec",
    "quant_of",
    "quantizations",
    "split_repo_spec",
]
