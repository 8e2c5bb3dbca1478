"""LTI 1.3: the class server launched from Canvas or Moodle, the student's LMS identity as the annotator.

With ``playground serve --lti-config FILE`` (pylti1p3's ``ToolConfJsonFile``: per platform issuer its
client id, login, token and key-set URLs, deployment ids and this tool's key files) the server answers:

* ``lti/login`` — OIDC login initiation (GET or POST from the platform): a state cookie and a nonce, then
  the redirect to the platform's authorisation URL (pylti1p3's ``OIDCLogin``);
* ``lti/launch`` — the launch (POST ``id_token``, ``state``): pylti1p3's ``MessageLaunch.validate`` checks
  the state, the nonce (one this tool issued), the issuer and client id, the signature against the platform's JWKS,
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

Here: switching LTI on and routing it; the claims, roles and names in :mod:`~.lti_claims`; pylti1p3's
adapters, the handlers and the AGS passback in :mod:`~.lti_flow` (imported only when LTI is on: a server
without it never loads pylti1p3).  The login and launch states live in this process's memory
(:class:`MemoryCache`, with expiry); the launches AGS needs are also written, owner-only, to
``lti-launches.json`` beside the config file and read again at start, so grades can be sent after a restart.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from . import roster
from .lti_claims import (
    AGS_CLAIM,
    LTI_CONFIG_ENV,
    ROLES_CLAIM,
    LaunchRefused,
    LtiState,
    MemoryCache,
    annotator_of,
    role_of_launch,
)

__all__ = ["AGS_CLAIM", "LAUNCHES_FILE", "LTI_CONFIG_ENV", "ROLES_CLAIM", "LaunchRefused", "LtiState", "MemoryCache",
           "annotator_of", "configure", "handlers", "prepare_environment", "role_of_launch"]

log = logging.getLogger("playground.serving")

#: Beside the config file: the students' launches (for AGS), kept across restarts.
LAUNCHES_FILE = "lti-launches.json"
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
    _STATE = LtiState(path, keys.get("student", ""), keys.get("instructor", ""), keys.get("roster", ""),
                      db=env.get("PLAYGROUND_DB") or None,
                      launches_file=os.path.join(os.path.dirname(path), LAUNCHES_FILE))
    _STATE.tool_config()  # a config that cannot be read stops the server here, with pylti1p3's reason
    _STATE.read_launches()  # likewise a kept-launches file that cannot be read (never dropped in silence)
    if not _STATE.class_key:
        log.warning("playground: LTI without a class key (a loopback server): launches cannot give students "
                    "their link; serve with --host, or set $PLAYGROUND_SERVE_TOKEN")
    return _STATE


def handlers(server_url: str, state: LtiState | None = None) -> list[Any]:
    """The LTI routes under ``server_url`` (none when LTI is off)."""
    st = state if state is not None else _STATE
    if st is None:
        return []
    from jupyter_server.utils import url_path_join

    from .lti_flow import GradesHandler, JwksHandler, LaunchHandler, LoginHandler

    st.page_url = server_url
    args = {"state": st}
    return [(url_path_join(server_url, "lti/login"), LoginHandler, args),
            (url_path_join(server_url, "lti/launch"), LaunchHandler, args),
            (url_path_join(server_url, "lti/jwks"), JwksHandler, args),
            (url_path_join(server_url, "lti/grades"), GradesHandler, args)]
