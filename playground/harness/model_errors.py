"""The one-line errors of model calls: what happened — the fix (see :mod:`playground.harness.llm`)."""
from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CacheMiss", "JudgeOutputError", "ModelError", "ModelNotFound", "ModelTimeout", "OllamaUnavailable", "seconds_text",
]


class ModelError(RuntimeError):
    """A model call failed; ``str(error)`` is one line: what happened — the fix."""

    def __init__(self, problem: str, fix: str = ""):
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} — {fix}" if fix else problem)


class OllamaUnavailable(ModelError):
    """No Ollama server answers at the configured host."""

    def __init__(self, host: str):
        self.host = host
        super().__init__(f"Ollama is not running at {host}", "start it with `ollama serve`")


class ModelNotFound(ModelError):
    """The server answered 404: the model (or models) are not pulled."""

    def __init__(self, models: str | Sequence[str]):
        self.models = (models,) if isinstance(models, str) else tuple(models)
        pulls = " && ".join(f"ollama pull {m}" for m in self.models)
        if len(self.models) == 1:
            problem = f"model '{self.models[0]}' is not pulled"
        else:
            problem = "models " + ", ".join(f"'{m}'" for m in self.models) + " are not pulled"
        super().__init__(problem, f"run `{pulls}`")

    @property
    def model(self) -> str:
        return self.models[0]


class ModelTimeout(ModelError):
    """The model did not answer within the client timeout."""

    def __init__(self, model: str, timeout: float | None):
        self.model = model
        self.timeout = timeout
        super().__init__(
            f"model '{model}' did not answer within {seconds_text(timeout)}",
            "raise --timeout (ollama.timeout in the config) or use a smaller model",
        )


class JudgeOutputError(ModelError):
    """The judge's reply was not valid JSON for the schema, even after one reminder."""

    def __init__(self, model: str, where: str, reason: str):
        self.model = model
        self.where = where
        self.reason = reason
        super().__init__(
            f"judge '{model}' returned invalid output for {where} twice: {reason}",
            "use a judge model that follows JSON output (e.g. llama3.1:8b) or limit the judge with judge.window, "
            "then rerun with --resume",
        )


class CacheMiss(ModelError):
    """A cache-only (offline) run needed a call that is not in the cache."""

    def __init__(self, kind: str, model: str, path: str):
        super().__init__(
            f"{kind} call to '{model}' is not in the model cache {path}",
            "run once with Ollama available (`ollama serve`) to fill the cache",
        )


def seconds_text(timeout: float | None) -> str:
    """``timeout`` as an error message says it: ``"60 s"``, or ``"the timeout"`` when there is none."""
    if timeout is None:
        return "the timeout"
    return f"{timeout:g} s"
