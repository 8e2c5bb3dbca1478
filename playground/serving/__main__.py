"""``python -m playground.serving NOTEBOOK [VOILA OPTIONS]``: the guarded Voila (see :mod:`playground.serving.app`)."""
from .app import main

__all__: list[str] = []

main()
