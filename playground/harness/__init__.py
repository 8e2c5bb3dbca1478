"""The automated harness: retrieval, deterministic scorers, decisions, assertions, runs and the gate.

No model and no network on the default path; the Ollama legs live in
``llm``, ``generate``, ``judge`` and ``embed`` and are used only when a
configuration asks for them.
"""

__all__: list[str] = []  # the modules are the API: playground.harness.run, .config, .score, ...
