"""Schemathesis hooks: what openapi.yaml cannot say, supplied so that schema-valid requests
are also valid for the server's business rules (and the session travels one way only).

- The session is the bearer token (`[auth.openapi.sessionBearer]`), so the optional
  `session_id` query and body fields are dropped, and a `{session_id}` path segment carries the
  same token; the server refuses a request naming two different sessions (400).
- Positive cases get a password confirmation equal to the password, passwords that pass the
  STANDARD policy, and usernames and character names nobody has taken yet. Negative cases are
  left alone, so the fuzzer still checks that broken requests are refused.
"""
import itertools
import os

import schemathesis

TOKEN = os.environ["MUD_FUZZ_TOKEN"]
_serial = itertools.count(1)


def _letters(n: int) -> str:
    """1 → 'a', 27 → 'ba': names allow letters only."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = chr(97 + r) + out
        if n == 0:
            return out


def _password(n: int) -> str:
    return f"Quiet-Lantern-{n:04d}x"


def _fix_body(method: str, path: str, body: dict) -> None:
    n = next(_serial)
    if "password" in body and "password_confirm" in body:
        body["password"] = body["password_confirm"] = _password(n)
    if (method, path) in (("POST", "/register"), ("POST", "/admin/user/create")):
        body["username"] = f"fz{n}"
    if "character_name" in body:
        body["character_name"] = f"Fuzz {_letters(n).capitalize()}"
    if (method, path) == ("POST", "/login-direct"):
        body["username"] = f"fz{n}"
    if "new_password" in body:
        body["new_password"] = _password(n)


@schemathesis.hook
def map_case(context, case):
    if isinstance(case.query, dict):
        case.query.pop("session_id", None)
    if isinstance(case.path_parameters, dict) and "session_id" in case.path_parameters:
        case.path_parameters["session_id"] = TOKEN
    if isinstance(case.body, dict):
        case.body.pop("session_id", None)
        if case.meta is not None and case.meta.generation.mode.is_positive:
            _fix_body(case.method.upper(), case.path, case.body)
    return case
