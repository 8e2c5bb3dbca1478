"""What an LTI launch says and what the tool keeps: the claims read, the roles mapped, the name taken, the
launch state kept in memory (no pylti1p3 import: :mod:`playground.serving.lti` is imported by every server).
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AGS_CLAIM", "LTI_CONFIG_ENV", "ROLES_CLAIM", "LaunchRefused", "LtiState", "MemoryCache", "annotator_of",
           "role_of_launch"]

#: The environment variable ``serve --lti-config`` gives the server (the config file's absolute path).
LTI_CONFIG_ENV = "PLAYGROUND_LTI_CONFIG"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
INSTRUCTOR_ROLES = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
                    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#",
                    "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator")
LEARNER_ROLES = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
                 "http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#")


class LaunchRefused(ValueError):
    """A launch the tool refuses after pylti1p3 accepted it (no role it maps, no usable name)."""


class MemoryCache:
    """``get``/``set(key, value, exp)`` with expiry in seconds: the cache pylti1p3's ``CacheDataStorage`` uses."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] < time.monotonic():
                self._items.pop(key, None)
                return None
            return found[1]

    def set(self, key: str, value: Any, exp: int | None = None) -> None:
        with self._lock:
            self._items[key] = (time.monotonic() + (exp if exp else 3600), value)


@dataclass
class LtiState:
    """What the LTI handlers need: the tool config, the keys, where the page and the store are, and the
    launches seen (annotator → launch claims, for AGS)."""

    config_path: str
    class_key: str
    instructor_key: str
    roster_secret: str
    page_url: str = "/"
    db: str | None = None
    cache: MemoryCache = field(default_factory=MemoryCache)
    launches: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    launches_file: str | None = None

    def keep_launch(self, name: str, claims: Mapping[str, Any]) -> None:
        """Note a student's launch (for AGS) and, with ``launches_file``, write all of them there whole
        (owner-only: they name the students), so a restarted server can still send their grades."""
        self.launches[name] = dict(claims)
        if self.launches_file:
            from ..files import write_atomic

            write_atomic(self.launches_file, json.dumps(self.launches, sort_keys=True, indent=1), private=True)

    def read_launches(self) -> None:
        """The launches ``launches_file`` holds (none when it does not exist); ValueError naming the file when
        it is not a JSON object of launches."""
        if not self.launches_file or not os.path.exists(self.launches_file):
            return
        try:
            with open(self.launches_file, encoding="utf-8") as fh:
                found = json.load(fh)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.launches_file}: cannot read the kept LTI launches: {exc}") from None
        if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
            raise ValueError(f"{self.launches_file}: not a JSON object of launches (name -> claims)")
        self.launches.update(found)

    def tool_config(self) -> Any:
        """pylti1p3's ``ToolConfJsonFile`` of the config (imported here: a server without LTI never loads it)."""
        from pylti1p3.tool_config import ToolConfJsonFile

        return ToolConfJsonFile(self.config_path)


def annotator_of(claims: Mapping[str, Any]) -> str:
    """The annotator name of a launch: ``email``, else ``name``, else ``lms-SUB`` (the page's name rule)."""
    from ..ui.session_types import validate_annotator

    for candidate in (claims.get("email"), claims.get("name"), f"lms-{claims.get('sub', '')}"):
        if isinstance(candidate, str) and candidate.strip():
            try:
                return validate_annotator(candidate)
            except ValueError:
                continue
    raise LaunchRefused("the launch names no one this page can label as (no email, name or sub)")


def role_of_launch(claims: Mapping[str, Any]) -> str | None:
    """``instructor``, ``student`` or None from the launch's roles (module docstring; instructor first)."""
    roles = [str(r) for r in claims.get(ROLES_CLAIM, []) or []]
    if any(r == p or (p.endswith("#") and r.startswith(p)) for r in roles for p in INSTRUCTOR_ROLES):
        return "instructor"
    if any(r == p or (p.endswith("#") and r.startswith(p)) for r in roles for p in LEARNER_ROLES):
        return "student"
    return None
