"""Schemathesis hooks: what openapi.yaml cannot say, supplied so that schema-valid requests
are also valid for the server's business rules (and the session travels one way only).

- The session is the bearer token (`[auth.openapi.sessionBearer]`), so the optional
  `session_id` query and body fields are dropped, and a `{session_id}` path segment carries the
  same token; the server refuses a request naming two different sessions (400).
- A building write takes the version last read as `If-Match` or as `version`, and refuses
  (400) a request that sends neither, or both naming different versions: positive cases send
  exactly one (a stale one answers 409, which is expected).
- Positive cases get a password confirmation equal to the password, passwords that pass the
  STANDARD policy, and usernames and character names nobody has taken yet (and with no
  reserved word); a report resolved with a note that says something; building names and
  descriptions that are not blank once kept as plain text (controls and invisible characters
  dropped, then trimmed); scripts that compile (whether a text is JavaScript, no schema says).
  Negative cases are left alone, so the fuzzer still checks that broken requests are refused.
"""
import itertools
import os

import schemathesis

TOKEN = os.environ["MUD_FUZZ_TOKEN"]
LLM_URL = os.environ["MUD_FUZZ_LLM_URL"]
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
    # Digits apart, so that no run like 123 or 000 trips the STANDARD policy.
    return "Quiet-Lantern-" + ".".join(str(n))


def _fix_body(method: str, path: str, body: dict) -> None:
    n = next(_serial)
    if "password" in body and "password_confirm" in body:
        body["password"] = body["password_confirm"] = _password(n)
    if (method, path) in (("POST", "/register"), ("POST", "/admin/user/create")):
        body["username"] = f"fz{n}"
    if "character_name" in body:
        # The Q keeps the unique letters from ever forming a reserved word such as "Gm" (400).
        body["character_name"] = f"Fuzz Q{_letters(n)}"
    if (method, path) in (("POST", "/login"), ("POST", "/login-direct")):
        # Trimmed length 2..20 (400 otherwise); an unknown name then answers 401.
        body["username"] = f"fz{n}"
    if isinstance(body.get("target_username"), str) and not body["target_username"].strip():
        # Trimmed, a blank name is missing (400 `target_username is required`, as the reference words it).
        body["target_username"] = f"fz{n}"
    if "new_password" in body:
        body["new_password"] = _password(n)
    if (method, path) == ("POST", "/admin/user/manage"):
        # The action decides which of the optional fields it needs (400 without it).
        action = str(body.get("action", "")).strip().lower()
        if action == "change_role":
            body.setdefault("new_role", "player")
        if action == "change_password":
            body.setdefault("new_password", _password(n))
    if path.startswith("/admin/reports/") and isinstance(body.get("note"), str) and not _visible(body["note"]):
        body["note"] = "Looked into it."
    if path.startswith("/api/worlds/"):
        for key in ("name", "description"):
            if isinstance(body.get(key), str) and not _visible(body[key]):
                body[key] = f"Fuzz {_letters(n)}"
        if isinstance(body.get("script"), str) and body["script"].strip():
            body["script"] = "function onSay(actor, text) { self.say(text); }"
    if (method, path) == ("POST", "/admin/llm/command") and "server_url" in body:
        # Only the configured language-model servers are allowed (400 otherwise).
        body["server_url"] = LLM_URL


def _visible(text: str) -> bool:
    """Whether anything is left of a text kept as plain text: a printable character that is not a space."""
    return any(ch.isprintable() and not ch.isspace() for ch in text)


def _is_positive(case) -> bool:
    return case.meta is not None and case.meta.generation.mode.is_positive


# before_call, not map_case: it runs in every phase (examples and coverage included), right
# before the request is sent.
@schemathesis.hook
def before_call(context, case, kwargs):
    if isinstance(case.query, dict):
        case.query.pop("session_id", None)
    if isinstance(case.path_parameters, dict) and "session_id" in case.path_parameters:
        case.path_parameters["session_id"] = TOKEN
    if isinstance(case.body, dict):
        case.body.pop("session_id", None)
        if _is_positive(case):
            _fix_body(case.method.upper(), case.path, case.body)
    if _is_positive(case) and case.path.startswith("/api/worlds/") and case.method.upper() in ("POST", "PATCH", "DELETE"):
        _one_version(case, kwargs)


def _one_version(case, kwargs) -> None:
    """Exactly one of If-Match and `version` (in the body or the query) on a building write."""
    in_body = isinstance(case.body, dict) and "version" in case.body
    in_query = isinstance(case.query, dict) and "version" in case.query
    # The header is in the case and, already prepared, in the request's arguments.
    header_sets = [h for h in (case.headers, kwargs.get("headers")) if h is not None]
    has_header = any(k.lower() == "if-match" for h in header_sets for k in list(h))
    if has_header and (in_body or in_query):
        for h in header_sets:
            for k in [k for k in list(h) if k.lower() == "if-match"]:
                del h[k]
    elif not has_header and not (in_body or in_query):
        creates = case.method.upper() == "POST" and case.path.endswith(("/rooms", "/items"))
        if not creates:  # creating a room or an item takes no version; every other write needs one
            for h in header_sets:
                h["If-Match"] = '"1"'
            if case.headers is None:
                case.headers = {"If-Match": '"1"'}
