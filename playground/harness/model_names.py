"""Ollama model names: when two spellings name the same model."""
from __future__ import annotations

__all__ = ["normalize_model_name", "same_model"]


def normalize_model_name(name: str) -> str:
    """``llama3`` and ``llama3:latest`` name the same model; names compare case-insensitively."""
    name = name.strip().lower()
    for prefix in ("registry.ollama.ai/library/", "library/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


def same_model(a: str | None, b: str | None) -> bool:
    """Both names given and naming the same model by :func:`normalize_model_name`."""
    return bool(a and b) and normalize_model_name(a or "") == normalize_model_name(b or "")
