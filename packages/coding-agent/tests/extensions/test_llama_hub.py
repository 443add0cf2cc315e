"""Hugging Face helpers of `/llama` → `Download model…`: token lookup order, GGUF quantization parsing, the hub
client against an `httpx2.MockTransport` (never the real hub)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from apex_coding_agent.extensions.llama.hub import (
    HubClient,
    HubError,
    find_hf_token,
    format_bytes,
    is_repo_spec,
    quant_of,
    quantizations,
    split_repo_spec,
)


def test_token_lookup_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = {
        "path": tmp_path / "explicit" / "token-file",
        "hf_home": tmp_path / "hf-home" / "token",
        "xdg": tmp_path / "xdg" / "huggingface" / "token",
        "home": home / ".cache" / "huggingface" / "token",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"  hf_{name}\n")
    env = {
        "HF_TOKEN": "hf_env",
        "HF_TOKEN_PATH": str(files["path"]),
        "HF_HOME": str(tmp_path / "hf-home"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
    }
    order = []
    for drop in ("HF_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "XDG_CACHE_HOME"):
        order.append(find_hf_token(env, home))
        del env[drop]
    order.append(find_hf_token(env, home))
    assert order == ["hf_env", "hf_path", "hf_hf_home", "hf_xdg", "hf_home"]
    files["home"].unlink()
    assert find_hf_token(env, home) is None


def test_blank_token_and_missing_files_fall_through(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("\n")
    xdg_token = tmp_path / "xdg" / "huggingface" / "token"
    xdg_token.parent.mkdir(parents=True)
    xdg_token.write_text("hf_xdg")
    env = {
        "HF_TOKEN": "  ",
        "HF_TOKEN_PATH": str(tmp_path / "missing"),
        "HF_HOME": str(tmp_path),  # holds no `token` file
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
    }
    assert find_hf_token(env, tmp_path / "home") == "hf_xdg"
    env["HF_TOKEN_PATH"] = str(tmp_path / "empty")
    assert find_hf_token(env, tmp_path / "home") == "hf_xdg"


def test_quantization_tags_and_grouping() -> None:
    assert quant_of("Qwen2.5-7B-Instruct-Q4_K_M.gguf") == "Q4_K_M"
    assert quant_of("sub/model.iq2_xs.gguf") == "IQ2_XS"
    assert quant_of("model-bf16-00002-of-00003.gguf") == "BF16"
    assert quant_of("model-Q8_0.gguf") == "Q8_0"
    assert quant_of("mmproj-model-F16.gguf") is None
    assert quant_of("README.md") is None
    assert quant_of("model.gguf") is None
    found = quantizations(
        [
            {"rfilename": "README.md", "size": 10},
            {"rfilename": "m-Q8_0-00001-of-00002.gguf", "size": 100},
            {"rfilename": "m-Q4_K_M.gguf", "size": 40},
            {"rfilename": "m-Q8_0-00002-of-00002.gguf", "size": 50},
            {"rfilename": "m-F16.gguf"},
            {"rfilename": "mmproj-F16.gguf", "size": 7},
        ]
    )
    assert [(q.name, q.size, len(q.files)) for q in found] == [("Q8_0", 150, 2), ("Q4_K_M", 40, 1), ("F16", None, 1)]


def test_repo_specs_and_sizes() -> None:
    assert is_repo_spec("org/model-GGUF") and is_repo_spec("org/model-GGUF:Q4_K_M")
    assert not is_repo_spec("qwen 7b") and not is_repo_spec("qwen")
    assert split_repo_spec("org/m:Q4_K_M") == ("org/m", "Q4_K_M")
    assert split_repo_spec("org/m") == ("org/m", None)
    assert (format_bytes(512), format_bytes(2048), format_bytes(4_368_439_584)) == ("512 B", "2.0 KB", "4.1 GB")


async def test_search_and_details_requests() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if request.url.path == "/api/models":
            return httpx2.Response(200, json=[{"id": "org/a-GGUF", "downloads": 1200}, {"id": "org/b"}, {"x": 1}])
        if request.url.path == "/api/models/org/a-GGUF":
            body = {
                "id": "org/a-GGUF",
                "gated": "manual",
                "siblings": [{"rfilename": "a-Q4_K_M.gguf", "size": 4}],
            }
            return httpx2.Response(200, json=body)
        if request.url.path == "/api/models/org/private":
            return httpx2.Response(401, json={"error": "Invalid credentials"})
        return httpx2.Response(404, json={"error": "Repository not found"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        hub = HubClient("http://hub.test/", "hf_secret", http_client=http)
        results = await hub.search("qwen 7b")
        assert [(m.id, m.downloads) for m in results] == [("org/a-GGUF", 1200), ("org/b", 0)]
        assert dict(seen[0].url.params) == {
            "search": "qwen 7b",
            "filter": "gguf",
            "sort": "downloads",
            "direction": "-1",
            "limit": "20",
        }
        assert seen[0].headers["Authorization"] == "Bearer hf_secret"
        details = await hub.details("org/a-GGUF")
        assert (details.id, details.gated, [q.name for q in details.quantizations]) == (
            "org/a-GGUF",
            "manual",
            ["Q4_K_M"],
        )
        assert dict(seen[1].url.params) == {"blobs": "true"}
        with pytest.raises(HubError, match="refused access \\(HTTP 401\\); set HF_TOKEN"):
            await hub.details("org/private")
        with pytest.raises(HubError, match="does not know this repository"):
            await hub.details("org/none")
        anonymous = HubClient("http://hub.test", None, http_client=http)
        await anonymous.search("x")
        assert "Authorization" not in seen[-1].headers
    assert details.quantizations[0].files == ("a-Q4_K_M.gguf",)
