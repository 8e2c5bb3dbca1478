"""LTI 1.3 end to end against a simulated platform on loopback: its own RSA keys and JWKS, OIDC login and launch
into the real handlers of :mod:`playground.serving.lti` (pylti1p3), roles mapped, the student's signed link,
a forged and an expired launch refused, and the lesson's score received by the platform's AGS endpoint."""
from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
import tornado.web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from tornado.httpserver import HTTPServer
from tornado.testing import bind_unused_port

from playground.serving import lti, roster

ISS = "https://lms.example.edu"
CLIENT = "playground-tool"
DEPLOYMENT = "dep-1"
CLASS_KEY, INSTRUCTOR_KEY, SECRET = "class-key-1", "instructor-key-1", "roster-secret-1"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


def _key() -> tuple[Any, str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return key, private, public


class Platform:
    """The LMS's side: JWKS, the token endpoint and a line item's scores endpoint; it records what it got."""

    def __init__(self) -> None:
        self.key, self.private, _pub = _key()
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = {"keys": [{**jwk, "kid": "platform-1", "alg": "RS256", "use": "sig"}]}
        self.token_requests: list[dict[str, str]] = []
        self.scores: list[tuple[str, dict[str, Any]]] = []
        self.user: dict[str, Any] = {"roles": [LEARNER]}  # who is signed in to the LMS (Auth)
        self.base = ""  # its URL, once served

    def app(self) -> tornado.web.Application:
        platform = self

        class Jwks(tornado.web.RequestHandler):
            def get(self) -> None:
                self.finish(platform.jwks)

        class Token(tornado.web.RequestHandler):
            def post(self) -> None:
                platform.token_requests.append({k: self.get_argument(k) for k in self.request.arguments})
                self.finish({"access_token": "platform-token-1", "token_type": "Bearer", "expires_in": 3600})

        class Scores(tornado.web.RequestHandler):
            def post(self) -> None:
                platform.scores.append((self.request.headers.get("Authorization", ""), json.loads(self.request.body)))
                self.set_status(200)
                self.finish({})

        class Auth(tornado.web.RequestHandler):
            """The platform's authorisation step: the user is signed in to the LMS as ``platform.user``; the
            id_token goes back to the tool's redirect URI in an auto-submitted form (response_mode form_post)."""

            def get(self) -> None:
                q = {k: self.get_argument(k) for k in ("state", "nonce", "redirect_uri")}
                token = platform.id_token(q["nonce"], q["redirect_uri"], base=platform.base, **platform.user)
                self.finish(f'<form method="post" action="{q["redirect_uri"]}"><input type="hidden" name="id_token" '
                            f'value="{token}"><input type="hidden" name="state" value="{q["state"]}"></form>'
                            "<script>document.forms[0].submit()</script>")

        return tornado.web.Application([("/jwks", Jwks), ("/token", Token), ("/auth", Auth),
                                        ("/lineitems/7/lineitem/scores", Scores)])

    def id_token(self, nonce: str, target: str, *, roles: list[str], key: Any = None, exp: float | None = None,
                 email: str = "ana@school.edu", ags: bool = True, base: str = "") -> str:
        """A launch id_token as the platform signs it (``key``: another key, to forge one)."""
        now = int(time.time())
        claims = {
            "iss": ISS, "aud": CLIENT, "sub": "lms-user-42", "iat": now,
            "exp": int(exp if exp is not None else now + 300), "nonce": nonce, "email": email, "name": "Ana Example",
            "https://purl.imsglobal.org/spec/lti/claim/deployment_id": DEPLOYMENT,
            "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
            "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
            "https://purl.imsglobal.org/spec/lti/claim/resource_link": {"id": "link-1"},
            "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": target,
            "https://purl.imsglobal.org/spec/lti/claim/roles": roles,
        }
        if ags:
            claims[lti.AGS_CLAIM] = {"scope": [SCORE_SCOPE], "lineitem": f"{base}/lineitems/7/lineitem"}
        return jwt.encode(claims, key if key is not None else self.key, algorithm="RS256",
                          headers={"kid": "platform-1"})


class _Loop:
    """Tornado apps served on loopback from a thread of their own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.servers: list[HTTPServer] = []

    def serve(self, app: tornado.web.Application) -> int:
        sock, port = bind_unused_port()

        async def start() -> None:
            server = HTTPServer(app)
            server.add_sockets([sock])
            self.servers.append(server)

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)
        return port

    def stop(self) -> None:
        for server in self.servers:
            self.loop.call_soon_threadsafe(server.stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    loop, tool_loop = _Loop(), _Loop()  # two servers, two threads: like two machines
    platform = Platform()
    p_port = loop.serve(platform.app())
    base = f"http://127.0.0.1:{p_port}"
    _k, tool_private, tool_public = _key()
    (tmp_path / "tool.key").write_text(tool_private)
    (tmp_path / "tool.pub").write_text(tool_public)
    config = tmp_path / "lti.json"
    config.write_text(json.dumps({ISS: [{
        "default": True, "client_id": CLIENT, "auth_login_url": f"{base}/auth", "auth_token_url": f"{base}/token",
        "auth_audience": None, "key_set_url": f"{base}/jwks", "key_set": None, "private_key_file": "tool.key",
        "public_key_file": "tool.pub", "deployment_ids": [DEPLOYMENT]}]}))
    db = _graded_store(tmp_path)
    state = lti.LtiState(str(config), CLASS_KEY, INSTRUCTOR_KEY, SECRET, db=str(db),
                         launches_file=str(tmp_path / lti.LAUNCHES_FILE))
    t_port = tool_loop.serve(tornado.web.Application(lti.handlers("/", state)))
    try:
        yield {"platform": platform, "base": base, "tool": f"http://127.0.0.1:{t_port}", "state": state,
               "tool_public": tool_public, "config": config}
    finally:
        tool_loop.stop()
        loop.stop()


def _graded_store(tmp_path: Path) -> Path:
    """Lesson week-1 (GC-0036, 23 keyed items); ana@school.edu labels the first 10 keyed items as the key says."""
    from playground.calibrate.room_grid import answer_key_values
    from playground.datasets import open_dataset
    from playground.lessons import lesson_catalog, make_lesson
    from playground.store import open_store

    golden = open_dataset(None)
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        lesson = store.save_lesson(make_lesson("week-1", golden, ["GC-0036"]))
        units = lesson_catalog(lesson, golden.catalog())
        key = answer_key_values(golden, list(units.values()))
        for uid, dim in sorted(key)[:10]:
            store.set_label("ana@school.edu", units[uid], dim, key[(uid, dim)])
    return db


def _login(session: requests.Session, world: dict[str, Any]) -> dict[str, str]:
    """OIDC login initiation from the platform; the tool redirects to the platform's auth URL."""
    r = session.get(f"{world['tool']}/lti/login", allow_redirects=False, params={
        "iss": ISS, "login_hint": "user-1", "target_link_uri": f"{world['tool']}/lti/launch",
        "client_id": CLIENT, "lti_message_hint": "m-1"})
    assert r.status_code == 302, r.text
    location = r.headers["Location"]
    assert location.startswith(f"{world['base']}/auth?")
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert query["client_id"] == CLIENT and query["redirect_uri"] == f"{world['tool']}/lti/launch"
    assert query["response_type"] == "id_token" and query["scope"] == "openid"
    return query


def _id_token(world: dict[str, Any], nonce: str, **kwargs: Any) -> str:
    return world["platform"].id_token(nonce, f"{world['tool']}/lti/launch", base=world["base"], **kwargs)


def _launch(world: dict[str, Any], **kwargs: Any) -> requests.Response:
    session = requests.Session()
    query = _login(session, world)
    token = _id_token(world, query["nonce"], **kwargs)
    return session.post(f"{world['tool']}/lti/launch", data={"id_token": token, "state": query["state"]},
                        allow_redirects=False)


def test_a_learner_launch_becomes_the_annotator_under_a_signed_link(world):
    r = _launch(world, roles=[LEARNER])
    assert r.status_code == 302, r.text
    link = r.headers["Location"]
    assert link == roster.student_link("/", CLASS_KEY, SECRET, "ana@school.edu")
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert query["annotator"] == "ana@school.edu" and roster.verify(SECRET, "ana@school.edu", query["sig"])
    assert query["token"] == CLASS_KEY
    assert "ana@school.edu" in world["state"].launches


def test_an_instructor_launch_opens_the_page_with_the_instructors_key(world):
    r = _launch(world, roles=[INSTRUCTOR, LEARNER], email="teacher@school.edu")
    assert r.status_code == 302 and r.headers["Location"] == f"/?token={INSTRUCTOR_KEY}"
    assert not world["state"].launches  # an instructor is not graded


@pytest.mark.parametrize(("kwargs", "why"), [
    ({"key": "forged"}, "Can't decode id_token: Signature verification failed"),
    ({"exp": "past"}, "Can't decode id_token: Signature has expired"),
    ({"roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"]},
     "the launch's roles are neither Learner nor Instructor"),
])
def test_forged_expired_and_roleless_launches_are_refused(world, kwargs, why):
    args: dict[str, Any] = {"roles": [LEARNER]}
    if kwargs.get("key") == "forged":
        args["key"] = _key()[0]  # another key, the platform's kid: the JWKS's key does not verify it
    elif kwargs.get("exp") == "past":
        args["exp"] = time.time() - 120
    else:
        args.update(kwargs)
    r = _launch(world, **args)
    assert r.status_code == 403 and r.text == f"LTI launch refused: {why}\n"
    assert not world["state"].launches


def test_a_launch_without_the_login_state_is_refused(world):
    session = requests.Session()
    token = _id_token(world, str(uuid.uuid4()), roles=[LEARNER])
    r = session.post(f"{world['tool']}/lti/launch", data={"id_token": token, "state": "state-never-issued"},
                     allow_redirects=False)
    assert r.status_code == 403 and r.text == "LTI launch refused: State not found\n"


def test_grades_go_back_through_ags(world):
    assert _launch(world, roles=[LEARNER]).status_code == 302
    tool = world["tool"]
    refused = requests.post(f"{tool}/lti/grades", data={"lesson": "week-1", "token": CLASS_KEY})
    assert refused.status_code == 403 and not world["platform"].scores
    assert refused.text == "LTI grades refused: sending grades needs the instructor's key\n"
    r = requests.post(f"{tool}/lti/grades", data={"lesson": "week-1", "token": INSTRUCTOR_KEY})
    assert r.status_code == 200, r.text
    assert r.json() == {"no_ags": [], "not_launched": [], "sent": ["ana@school.edu"]}
    ((auth, score),) = world["platform"].scores
    assert auth == "Bearer platform-token-1"
    # 10 of the 23 keyed items right: 100 * 10 / 23 = 43.478... -> 43.48
    assert (score["scoreGiven"], score["scoreMaximum"], score["userId"]) == (43.48, 100, "lms-user-42")
    assert (score["activityProgress"], score["gradingProgress"]) == ("Completed", "FullyGraded")
    assert score["comment"] == "week-1: 10 of 23 keyed items right, 10 answered"
    # the tool's service token request is signed with the tool's key (the platform checks it against the JWKS)
    (req,) = world["platform"].token_requests
    assert req["grant_type"] == "client_credentials" and SCORE_SCOPE in req["scope"]
    body = jwt.decode(req["client_assertion"], world["tool_public"], algorithms=["RS256"],
                      audience=f"{world['base']}/token")
    assert body["iss"] == CLIENT == body["sub"]
    jwks = requests.get(f"{tool}/lti/jwks").json()
    assert len(jwks["keys"]) == 1 and jwks["keys"][0]["kty"] == "RSA"


def test_a_launch_without_ags_is_listed_not_sent(world):
    assert _launch(world, roles=[LEARNER], ags=False).status_code == 302
    r = requests.post(f"{world['tool']}/lti/grades", data={"lesson": "week-1", "token": INSTRUCTOR_KEY})
    assert r.json() == {"no_ags": ["ana@school.edu"], "not_launched": [], "sent": []}
    assert not world["platform"].scores and not world["platform"].token_requests


def test_a_student_who_did_not_launch_is_listed_not_sent(world):
    r = requests.post(f"{world['tool']}/lti/grades", data={"lesson": "week-1", "token": INSTRUCTOR_KEY})
    assert r.json() == {"no_ags": [], "not_launched": ["ana@school.edu"], "sent": []}
    bad = requests.post(f"{world['tool']}/lti/grades", data={"lesson": "week-9", "token": INSTRUCTOR_KEY})
    assert bad.status_code == 400 and "no lesson named 'week-9'" in bad.text


def test_launches_are_kept_across_a_restart(world):
    import os
    import stat

    assert _launch(world, roles=[LEARNER]).status_code == 302
    kept = Path(world["state"].launches_file)
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600  # owner-only: it names the students
    assert json.loads(kept.read_text())["ana@school.edu"]["sub"] == "lms-user-42"
    env = {lti.LTI_CONFIG_ENV: str(world["config"]), "PLAYGROUND_DB": world["state"].db}
    restarted = lti.configure({"student": CLASS_KEY, "instructor": INSTRUCTOR_KEY, "roster": SECRET}, env)
    assert restarted is not None and restarted.launches_file == str(kept)
    assert restarted.launches == world["state"].launches
    kept.write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"lti-launches\.json: not a JSON object of launches"):
        lti.configure({"student": CLASS_KEY}, env)
    lti.configure({}, {})  # LTI off again for the rest of the process


def test_identity_and_roles():
    assert lti.annotator_of({"email": " ana@school.edu ", "name": "Ana", "sub": "1"}) == "ana@school.edu"
    assert lti.annotator_of({"name": "Ana  Example", "sub": "1"}) == "Ana Example"
    assert lti.annotator_of({"sub": "abc"}) == "lms-abc"
    sub_role = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
    assert lti.role_of_launch({lti.ROLES_CLAIM: [sub_role]}) == "instructor"
    assert lti.role_of_launch({lti.ROLES_CLAIM: [LEARNER]}) == "student"
    assert lti.role_of_launch({lti.ROLES_CLAIM: []}) is None


def test_prepare_environment_makes_a_roster_class():
    env: dict[str, str] = {}
    assert not lti.prepare_environment(env) and env == {}
    env = {lti.LTI_CONFIG_ENV: "/x/lti.json"}
    assert lti.prepare_environment(env) and env["PLAYGROUND_ROSTER"] == "1"
    assert len(env["PLAYGROUND_ROSTER_SECRET"]) > 30
    env = {lti.LTI_CONFIG_ENV: "/x/lti.json", "PLAYGROUND_ROSTER_SECRET": "kept"}
    assert lti.prepare_environment(env) and env["PLAYGROUND_ROSTER_SECRET"] == "kept"
