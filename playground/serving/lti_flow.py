"""pylti1p3's tool flow on tornado: the request, cookie and redirect adapters, the login and launch, and the
handlers :func:`playground.serving.lti.handlers` routes (imported only when the server runs with LTI)."""
from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import tornado.web
from pylti1p3.cookie import CookieService
from pylti1p3.exception import LtiException
from pylti1p3.launch_data_storage.cache import CacheDataStorage
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request
from tornado.ioloop import IOLoop

from . import roster
from .lti_claims import AGS_CLAIM, LaunchRefused, LtiState, MemoryCache, annotator_of, role_of_launch

__all__ = ["GradesHandler", "JwksHandler", "LaunchHandler", "LoginHandler", "send_grades"]

log = logging.getLogger("playground.serving")


class _Storage(CacheDataStorage):  # type: ignore[type-arg,unused-ignore]
    def __init__(self, cache: MemoryCache) -> None:
        super().__init__()
        self._cache = cache  # type: ignore[assignment]


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
        where = json.dumps(self._location).replace("<", "\\u003c")  # no "</script>" out of the string
        self._handler.write(f"<script>window.location={where};</script>")

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

    def refuse(self, status: int, why: str, what: str = "launch") -> None:
        log.warning("playground: LTI %s refused: %s", self.request.path, why)
        self.set_status(status)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"LTI {what} refused: {why}\n")


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
                raise LaunchRefused("the launch's roles are neither Learner nor Instructor")
            name = annotator_of(claims)
        except (LtiException, LaunchRefused) as exc:
            self.refuse(403, str(exc))
            return
        if role == "student":  # with or without AGS: send_grades says which it could not send
            self.state.keep_launch(name, claims)
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
            self.refuse(403, "sending grades needs the instructor's key", "grades")
            return
        lesson = self.get_argument("lesson", "")
        try:
            report = await IOLoop.current().run_in_executor(None, send_grades, self.state, lesson)
        except (LtiException, ValueError, LookupError) as exc:
            self.refuse(400, str(exc), "grades")
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(report, sort_keys=True))


def send_grades(state: LtiState, lesson: str) -> dict[str, list[str]]:
    """Each launched student's overall score of ``lesson`` (out of 100) to the launch's AGS line item.

    ``{"sent": names, "not_launched": graded students with no launch seen, "no_ags": launched students whose
    launch offered no line item to score}``.  ValueError: no store, no such lesson, no key."""
    from pylti1p3.assignments_grades import AssignmentsGradesService  # only when grades are sent
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
