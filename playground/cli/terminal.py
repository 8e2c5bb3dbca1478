"""Text from the store printed on a terminal: control and format characters escaped (:func:`terminal_safe`)."""
from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["terminal_safe"]


_UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def terminal_safe(text: Any) -> str:
    """``text`` with control and format characters escaped (``\\x1b``, ``\\u202e``), safe to print."""
    out = []
    for ch in str(text):
        if unicodedata.category(ch) in _UNSAFE:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)
