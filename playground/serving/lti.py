"""LTI 1.3: the class server launched from Canvas or Moodle, the student's LMS identity as the annotator.

With ``playground serve --lti-config FILE`` (pylti1p3's ``ToolConfJsonFile``: per platform issuer its
client id, login, token and key-set URLs, deployment ids and this tool's key files) the server answers:

* ``lti/login`` — OIDC login initiation (GET or POST from the platform): a state cookie and a nonce, then
  the redirect to the platform's authorisation URL (pylti1p3's ``OIDCLogin``);
* ``lti/launch`` — the launch (POST ``id_token``, ``state``): pylti1p3's ``MessageLaunch.validate`` checks
  the state, the nonce (once only), the issuer and client id, the signature against the platform's JWKS,
  the expiry (PyJWT), the deployment and the message.  Refused (403, the reason in words): a forged token
  (another key), an expired one, an unknown platform or deployment, a launch without the login's state,
  a role that is neither Learner nor Instructor;
* ``lti/jwks`` — this tool's public key set (the platform reads it to check the tool's service tokens);
* ``lti/grades`` — POST ``lesson=NAME`` with the instructor's key: each launched student's overall score
  of that lesson (:mod:`playground.grades`) sent back through the platform's Assignment and Grade Services
  to the launch's line item, where the platform offered it (a launch without AGS is listed, not sent).

Identity (:func:`annotator_of`): the launch's ``email`` claim, else ``name``, else ``lms-`` and the
``sub``, tidied by the page's own name rule.  Roles (:func:`role_of_launch`): ``Instructor`` (and its
sub-roles, and an institution ``Administrator``) → instructor, ``Learner`` → student.  A student is
redirected to their signed per-student link (:func:`playground.serving.roster.student_link`: the class key,
the name and its signature under the roster secret), so the existing roster machinery binds the name to
the browser and the page's kernel refuses every other name; an instructor to the page with the
instructor's key.  The LTI server therefore runs as a roster class (:func:`prepare_environment`: names
bound, a roster secret drawn when none is given) and needs the class key (serve beyond loopback).

The login and launch states live in this process's memory (:class:`MemoryCache`, with expiry), as do the
launches AGS needs: a student who launched before a restart launches again before grades are sent.
"""
from __future__ import annotations

import hmac
import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import tornado.web
from jupyter_server.utils import url_path_join
from pylti1p3.cookie import CookieService
from pylti1p3.exception import LtiException
from pylti1p3.launch_data_storage.cache import CacheDataStorage
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request
from pylti1p3.tool_config import ToolConfJsonFile
from tornado.ioloop import IOLoop

from . import roster

__all__ = ["AGS_CLAIM", "LTI_CONFIG_ENV", "LtiState", "MemoryCache", "annotator_of", "configure", "handlers",
           "prepare_environment", "role_of_launch", "send_grades"]

log = logging.getLogger("playground.serving")

#: The environment variable ``serve --lti-config`` gives the server (the config file's absolute path).
LTI_CONFIG_ENV = "PLAYGROUND_LTI_CONFIG"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
INSTRUCTOR_ROLES = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
                    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#",
                    "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator")
LEARNER_ROLES = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
                 "http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#")


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


class _Storage(CacheDataStorage):  # type: ignore[type-arg,unused-ignore]
    def __init__(self, cache: MemoryCache) -> None:
        super().__init__()
        self._cache = cache  # type: ignore[assignment]


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

    def tool_config(self) -> ToolConfJsonFile:
        return ToolConfJsonFile(self.config_path)


_STATE: LtiState | None = None


def prepare_environment(environ: dict[str, str] | None = None) -> bool:
    """Before the role keys are taken: with ``$PLAYGROUND_LTI_CONFIG`` set, run as a roster class (names
    bound in every kernel) with a roster secret (drawn now when none is given).  Whether LTI is on."""
    env = os.environ if environ is None else environ
    if not env.get(LTI_CONFIG_ENV, "").strip():
        return False
    env["PLAYGROUND_ROSTER"] = "1"
    if not env.get("PLAYGROUND_ROSTER_SECRET", "").strip():
        env["PLAYGROUND_ROSTER_SECRET"] = roster.new_secret()
    return True


def configure(keys: Mapping[str, str], environ: Mapping[str, str] | None = None) -> LtiState | None:
    """The handlers' :class:`LtiState` from the keys ``auth.take_keys`` returned (None without LTI)."""
    global _STATE
    env = os.environ if environ is None else environ
    path = env.get(LTI_CONFIG_ENV, "").strip()
    if not path:
        _STATE = None
        return None
    ToolConfJsonFile(path)  # a config that cannot be read stops the server here, with pylti1p3's reason
    _STATE = LtiState(path, keys.get("student", ""), keys.get("instructor", ""), keys.get("roster", ""),
                      db=env.get("PLAYGROUND_DB") or None)
    return _STATE


def handlers(server_url: str, state: LtiState | None = None) -> list[Any]:
    """The LTI routes under ``server_url`` (none when LTI is off)."""
    st = state if state is not None else _STATE
    if st is None:
        return []
    st.page_url = server_url
    args = {"state": st}
    return [(url_path_join(server_url, "lti/login"), LoginHandler, args),
            (url_path_join(server_url, "lti/launch"), LaunchHandler, args),
            (url_path_join(server_url, "lti/jwks"), JwksHandler, args),
            (url_path_join(server_url, "lti/grades"), GradesHandler, args)]


def annotator_of(claims: Mapping[str, Any]) -> str:
    """The annotator name of a launch: ``email``, else ``name``, else ``lms-SUB`` (the page's name rule)."""
    from ..ui.session_types import validate_annotator

    for candidate in (claims.get("email"), claims.get("name"), f"lms-{claims.get('sub', '')}"):
        if isinstance(candidate, str) and candidate.strip():
            try:
                return validate_annotator(candidate)
            except ValueError:
                continue
    raise LtiException("the launch names no one this page can label as (no email, name or sub)")


def role_of_launch(claims: Mapping[str, Any]) -> str | None:
    """``instructor``, ``student`` or None from the launch's roles (module docstring; instructor first)."""
    roles = [str(r) for r in claims.get(ROLES_CLAIM, []) or []]
    if any(r == p or (p.endswith("#") and r.startswith(p)) for r in roles for p in INSTRUCTOR_ROLES):
        return "instructor"
    if any(r == p or (p.endswith("#") and r.startswith(p)) for r in roles for p in LEARNER_ROLES):
        return "student"
    return None


# --------------------------------------------------------------------------- pylti1p3 on tornado


class _Request(Request):
    def __init__(self, handler: tornado.web.RequestHandler) -> None:
        self._handler = handler

    @property
    def session(self) -> dict[str, Any]:
        return {}

    def is_secure(self) -> bool:
        return bool(self._handler.request.protocol == "https")

    def get_param(self, key: str) -> str:
        return self._handler.get_argument(key, None)  # type: ignore[return-value]

    def get_cookie(self, key: str) -> str | None:
        return self._handler.get_cookie(key)


class _Cookies(CookieService):
    def __init__(self, request: _Request, handler: tornado.web.RequestHandler) -> None:
        self._request = request
        self._handler = handler

    def get_cookie(self, name: str) -> str | None:
        return self._request.get_cookie(f"{self._cookie_prefix}-{name}")

    def set_cookie(self, name: str, value: str | int, exp: int | None = 3600) -> None:
        secure = self._request.is_secure()  # over https the launch comes from the LMS's page: SameSite=None
        self._handler.set_cookie(f"{self._cookie_prefix}-{name}", str(value), path="/", httponly=True,
                                 expires=time.time() + (exp or 3600), secure=secure,
                                 samesite="None" if secure else None)


class _Redirect(Redirect):
    def __init__(self, location: str, handler: tornado.web.RequestHandler) -> None:
        self._location = location
        self._handler = handler

    def do_redirect(self) -> None:
        self._handler.redirect(self._location)

    def do_js_redirect(self) -> None:
        self._handler.write(f"<script>window.location={json.dumps(self._location)};</script>")

    def set_redirect_url(self, location: str) -> None:
        self._location = location

    def get_redirect_url(self) -> str:
        return self._location


class _Login(OIDCLogin):
    def __init__(self, handler: tornado.web.RequestHandler, state: LtiState) -> None:
        request = _Request(handler)
        self._handler = handler
        super().__init__(request, state.tool_config(), _session(request, state), _Cookies(request, handler),
                         _Storage(state.cache))

    def get_redirect(self, url: str) -> _Redirect:
        return _Redirect(url, self._handler)

    def get_response(self, html: str) -> None:
        self._handler.write(html)


class _Launch(MessageLaunch):
    def __init__(self, handler: tornado.web.RequestHandler, state: LtiState) -> None:
        request = _Request(handler)
        super().__init__(request, state.tool_config(), _session(request, state), _Cookies(request, handler),
                         _Storage(state.cache))

    def _get_request_param(self, key: str) -> str:
        return str(self._request.get_param(key) or "")


def _session(request: _Request, state: LtiState) -> Any:
    from pylti1p3.session import SessionService

    service = SessionService(request)
    service.set_data_storage(_Storage(state.cache))
    return service


# --------------------------------------------------------------------------- handlers


class _LtiHandler(tornado.web.RequestHandler):
    """The platform posts here from its own page: no ``_xsrf`` (the launch's state and JWT protect it)."""

    def initialize(self, state: LtiState) -> None:
        self.state = state

    def check_xsrf_cookie(self) -> None:
        return None

    def refuse(self, status: int, why: str) -> None:
        log.warning("playground: LTI %s refused: %s", self.request.path, why)
        self.set_status(status)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"LTI launch refused: {why}\n")


class LoginHandler(_LtiHandler):
    """OIDC login initiation: the state and nonce, then the redirect to the platform."""

    def get(self) -> None:
        target = self.get_argument("target_link_uri", "")
        if not target:
            self.refuse(400, "the login request has no target_link_uri")
            return
        try:
            _Login(self, self.state).redirect(target)
        except LtiException as exc:
            self.refuse(403, str(exc))

    post = get


class LaunchHandler(_LtiHandler):
    """The launch: validated by pylti1p3, then the student's signed link or the instructor's page."""

    async def post(self) -> None:
        try:  # off the event loop: validating fetches the platform's key set over the network
            launch = _Launch(self, self.state)
            claims = await IOLoop.current().run_in_executor(None, lambda: launch.validate().get_launch_data())
            role = role_of_launch(claims)
            if role is None:
                raise LtiException("the launch's roles are neither Learner nor Instructor")
            name = annotator_of(claims)
        except LtiException as exc:
            self.refuse(403, str(exc))
            return
        if AGS_CLAIM in claims:
            self.state.launches[name] = claims
        self.redirect(self.target(role, name))

    def target(self, role: str, name: str) -> str:
        page = self.state.page_url
        if role == "instructor":
            key = self.state.instructor_key
            return f"{page}?token={key}" if key else page
        if not self.state.class_key or not self.state.roster_secret:
            raise tornado.web.HTTPError(500, "LTI needs the class key and a roster secret (serve beyond loopback)")
        return roster.student_link(page, self.state.class_key, self.state.roster_secret, name)


class JwksHandler(_LtiHandler):
    """This tool's public keys (JWKS), for the platform's check of the tool's service tokens."""

    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(self.state.tool_config().get_jwks()))


class GradesHandler(_LtiHandler):
    """POST ``lesson`` with the instructor's key (``token``): the lesson's scores back to the LMS (AGS)."""

    async def post(self) -> None:
        given = self.get_argument("token", "") or self.request.headers.get("X-Playground-Key", "")
        key = self.state.instructor_key
        if not key or not hmac.compare_digest(given.encode(), key.encode()):
            self.refuse(403, "sending grades needs the instructor's key")
            return
        lesson = self.get_argument("lesson", "")
        try:
            report = await IOLoop.current().run_in_executor(None, send_grades, self.state, lesson)
        except (LtiException, ValueError, LookupError) as exc:
            self.refuse(400, str(exc))
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(report, sort_keys=True))


def send_grades(state: LtiState, lesson: str) -> dict[str, list[str]]:
    """Each launched student's overall score of ``lesson`` (out of 100) to the launch's AGS line item.

    ``{"sent": names, "not_launched": graded students with no launch seen, "no_ags": launched students whose
    launch offered no line item to score}``.  ValueError: no store, no such lesson, no key."""
    from pylti1p3.assignments_grades import AssignmentsGradesService
    from pylti1p3.grade import Grade
    from pylti1p3.service_connector import ServiceConnector

    from ..grades import grades_of_lesson
    from ..store import open_store

    if not state.db:
        raise ValueError("the server has no label store (--db) to grade from")
    with open_store(state.db) as store:
        found = grades_of_lesson(store, lesson)
    if found is None:
        raise ValueError(f"no lesson named {lesson!r}")
    report: dict[str, list[str]] = {"sent": [], "not_launched": [], "no_ags": []}
    config = state.tool_config()
    for grade in found[1]:
        claims = state.launches.get(grade.annotator)
        if claims is None:
            report["not_launched"].append(grade.annotator)
            continue
        ags_data = claims.get(AGS_CLAIM) or {}
        if not ags_data.get("lineitem"):
            report["no_ags"].append(grade.annotator)
            continue
        registration = config.find_registration_by_params(claims["iss"], _client_id(claims))
        ags = AssignmentsGradesService(ServiceConnector(registration), dict(ags_data))  # type: ignore[arg-type]
        ags.put_grade(Grade().set_score_given(grade.overall).set_score_maximum(100).set_user_id(claims["sub"])
                      .set_activity_progress("Completed").set_grading_progress("FullyGraded")
                      .set_timestamp(time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()))
                      .set_comment(f"{found[0].name}: {grade.correct} of {grade.keyed} keyed items right, "
                                   f"{grade.answered} answered"))
        report["sent"].append(grade.annotator)
    return report


def _client_id(claims: Mapping[str, Any]) -> str:
    aud = claims.get("aud")
    return str(aud[0] if isinstance(aud, list) else aud)
