"""Build llama.cpp's `llama-server` once per machine and print its path (used by `nox -s llama`).

The package index has no llama.cpp binary, but the `llama-cpp-python` source distribution vendors llama.cpp:
this downloads that sdist with pip, builds only the server (CPU, Release, no tests/examples/web UI, static) with
CMake and keeps the binary in `$XDG_CACHE_HOME/apex-code/llama-server/<version>-<machine>/`. The build takes
5–20 minutes on two cores; later runs find the cached binary at once. The binary is tuned to this CPU
(`GGML_NATIVE`), hence the machine name in the cache path.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.3.36"
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # it would download the web UI
    "-DLLAMA_OPENSSL=OFF",
    "-DGGML_NATIVE=ON",
    "-DBUILD_SHARED_LIBS=OFF",
]


def cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "apex-code" / "llama-server" / f"{VERSION}-{platform.machine()}"


def build(target: Path) -> None:
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            sys.exit(f"build_llama_server: {tool} is needed (Debian: apt-get install cmake g++)")
    if importlib.util.find_spec("pip") is None:
        sys.exit("build_llama_server: pip is needed in this environment to fetch the llama-cpp-python sdist")
    with tempfile.TemporaryDirectory(prefix="llama-build-") as tmp:
        work = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
            + ["-d", str(work), f"llama-cpp-python=={VERSION}"],
            check=True,
        )
        (sdist,) = work.glob("llama_cpp_python-*.tar.gz")
        with tarfile.open(sdist) as archive:
            archive.extractall(work, filter="data")
        source = work / f"llama_cpp_python-{VERSION}" / "vendor" / "llama.cpp"
        out = work / "build"
        subprocess.run(["cmake", "-S", str(source), "-B", str(out), *CMAKE_FLAGS], check=True)
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(out), "--target", "llama-server", "-j", jobs], check=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        staged = target.with_suffix(".tmp")
        shutil.copy2(out / "bin" / "llama-server", staged)
        staged.replace(target)  # a build killed half-way never leaves a binary that looks finished


def main() -> None:
    target = cache_dir() / "llama-server"
    if not target.exists():
        print(f"building llama-server {VERSION} into {target.parent} (once per machine)...", file=sys.stderr)
        build(target)
    print(target)


if __name__ == "__main__":
    main()
