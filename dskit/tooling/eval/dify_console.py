"""Reading a Dify app's ``TASK_CATALOG`` through the console API, logged in as Dify's web UI logs in.

Why this is more than one GET with a bearer token: since the cookie login (Dify 1.12 has it), every
console call is checked twice (read from langgenius/dify's source):

- **Who calls** (api/extensions/ext_login.py ``load_user_from_request``): the access token comes from
  the ``access_token`` cookie, else from ``Authorization: Bearer``; with ``ADMIN_API_KEY_ENABLE`` on, a
  bearer equal to ``ADMIN_API_KEY`` plus an ``X-WORKSPACE-ID`` header naming a workspace acts as that
  workspace's owner.
- **CSRF** (api/libs/login.py ``login_required`` calls api/libs/token.py ``check_csrf_token`` for every
  method, GET included): the ``X-CSRF-Token`` header must equal the ``csrf_token`` cookie, be signed by
  the server, name the caller (``sub``) and be unexpired; else HTTP 401 "CSRF token is missing or
  invalid." Only paths matching ``CSRF_WHITE_LIST`` (``/console/api/apps/<id>/workflows/draft``, a
  ``re.match``, so everything under it too) skip it. A bearer token or an admin key alone therefore
  reads the app's draft but not its published workflow.

So the check logs in with an email and password as the web UI does (api/controllers/console/auth/login.py
``LoginApi.post``: ``POST /console/api/login`` ``{email, password, remember_me}``; the answer sets the
``access_token``, ``refresh_token`` and ``csrf_token`` cookies, each named ``__Host-…`` when the console
is served over https without ``COOKIE_DOMAIN``, api/libs/token.py ``_real_cookie_name``). The password is
sent Base64-encoded, as the web UI sends it (web/utils/encryption.ts ``encryptPassword``; the server's
``decrypt_password_field``, api/libs/encryption.py ``FieldEncryption.decrypt_field``, is a Base64 decode
and refuses anything else with 401 "Invalid encrypted data"). A release from before that encoding reads
the encoded text as a wrong password, so a refused login is tried once more with the password as typed.
Older releases answer the tokens in the body (``data.access_token``) and check no CSRF token; both
answers are read.

Then ``GET /console/api/apps/{id}/workflows/publish`` (api/controllers/console/app/workflow.py
``PublishedWorkflowApi``; ``null`` when nothing is published) gives ``environment_variables``
``[{name, value, value_type...}]``; a ``secret`` variable's value is shown as ``[__HIDDEN__]``
(api/constants ``HIDDEN_VALUE``). With an admin key or a bearer token, which cannot carry the login's
CSRF token, the published workflow is refused on Dify 1.12 and the draft
(``GET …/workflows/draft``) is read instead, and the check says it compared the draft.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

CSRF_HEADER = "X-CSRF-Token"  # api/constants/__init__.py HEADER_NAME_CSRF_TOKEN
WORKSPACE_HEADER = "X-WORKSPACE-ID"  # api/extensions/ext_login.py, the admin API key's workspace
COOKIES = ("access_token", "refresh_token", "csrf_token")  # api/constants COOKIE_NAME_*
HIDDEN_VALUE = "[__HIDDEN__]"  # api/constants HIDDEN_VALUE: a secret variable as the console shows it


class ConsoleError(RuntimeError):
    """The console could not be used (login refused, token rejected, app not found); one line."""


@dataclass(frozen=True)
class ConsoleAccess:
    """How to reach an app's workflow in Dify's console API.

    ``base_url``: the console API base (``http://localhost/console/api``); ``app_id``: the app's id (in
    its console URL). One way to sign in, tried in this order: ``email`` and ``password`` (the web UI's
    login: the only one that reads the *published* workflow on Dify 1.12); ``admin_key`` with
    ``workspace_id`` (a deployment with ``ADMIN_API_KEY_ENABLE``); ``token``, a console access token sent
    as a bearer (releases before the CSRF check; the draft only on 1.12).
    """

    base_url: str
    app_id: str
    email: str = ""
    password: str = ""
    admin_key: str = ""
    workspace_id: str = ""
    token: str = ""

    def how(self) -> str:
        """``login``, ``admin key``, ``token``, or ``""`` when nothing to sign in with was given."""
        if self.email and self.password:
            return "login"
        if self.admin_key:
            return "admin key"
        return "token" if self.token else ""


def error_line(status: int, body: str) -> str:
    """Dify's ``{"code", "message"}`` error body (or the raw text) as one line."""
    try:
        data = json.loads(body)
    except ValueError:
        return f"HTTP {status}: {' '.join(body.split())[:160] or '(empty body)'}"
    if isinstance(data, dict):
        return f"HTTP {status} {data.get('code') or ''}: {data.get('message') or ''}".replace(" :", ":")[:240]
    return f"HTTP {status}: {str(data)[:160]}"


def _cookie(session: Any, name: str) -> str:
    """The value of Dify's cookie ``name`` (or ``__Host-name``) in the session's jar, whatever its domain."""
    for cookie in session.cookies:
        if cookie.name in (name, f"__Host-{name}") and cookie.value:
            return str(cookie.value)
    return ""


class ConsoleClient:
    """One signed-in console session; :meth:`environment` reads the app's environment variables."""

    def __init__(self, access: ConsoleAccess, deadline: float) -> None:
        from dskit.tooling.llm.http import new_session  # noqa: PLC0415

        self.access = access
        self.base = access.base_url.rstrip("/")
        self.deadline = deadline
        self.session = new_session()
        self.headers: dict[str, str] = {}

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        from dskit.tooling.llm.http import request_with_deadline  # noqa: PLC0415

        return request_with_deadline(self.session, method, f"{self.base}{path}", deadline=self.deadline,
                                     headers={"Content-Type": "application/json", **self.headers}, json_body=body)

    def sign_in(self) -> None:
        """Set the headers every later call sends; raises :class:`ConsoleError` when refused."""
        how = self.access.how()
        if how == "login":
            self._login()
        elif how == "admin key":
            if not self.access.workspace_id:
                raise ConsoleError("an admin API key needs the workspace's id (X-WORKSPACE-ID)")
            self.headers = {"Authorization": f"Bearer {self.access.admin_key}",
                            WORKSPACE_HEADER: self.access.workspace_id}
        elif how == "token":
            self.headers = {"Authorization": f"Bearer {self.access.token}"}
        else:
            raise ConsoleError("no console sign-in given (an email and password, an admin API key, or a token)")

    def _login(self) -> None:
        encoded = base64.b64encode(self.access.password.encode("utf-8")).decode("ascii")
        first = response = self._call("POST", "/login", self._login_body(encoded))  # as the web UI sends it
        if response.status == 401:  # an older Dify compares the text as typed
            response = self._call("POST", "/login", self._login_body(self.access.password))
        if response.status >= 400:  # the web UI's refusal says more on a current Dify than the retry's
            refused = first if first.status >= 400 else response
            raise ConsoleError("console login: " + error_line(refused.status, refused.text()))
        try:
            answer = json.loads(response.text())
        except ValueError:
            answer = {}
        if isinstance(answer, dict) and answer.get("result") not in (None, "success"):
            raise ConsoleError(f"console login: {str(answer.get('data') or answer)[:200]}")
        tokens = answer.get("data") if isinstance(answer, dict) and isinstance(answer.get("data"), dict) else {}
        access = _cookie(self.session, "access_token") or str(tokens.get("access_token") or "")
        if not access:
            raise ConsoleError("console login answered no access token (neither cookie nor body)")
        csrf = _cookie(self.session, "csrf_token")
        jar = "; ".join(f"{c.name}={c.value}" for c in self.session.cookies
                        if c.name.removeprefix("__Host-") in COOKIES and c.value)
        self.headers = {"Authorization": f"Bearer {access}", **({"Cookie": jar} if jar else {}),
                        **({CSRF_HEADER: csrf} if csrf else {})}

    def _login_body(self, password: str) -> dict[str, Any]:
        return {"email": self.access.email, "password": password, "remember_me": False}

    def environment(self) -> tuple[list[dict[str, Any]], str]:
        """The app's environment variables and where they were read (``published`` or ``draft``)."""
        app = f"/apps/{self.access.app_id}/workflows"
        response = self._call("GET", f"{app}/publish")
        source = "published"
        csrf_refused = response.status == 401 and "csrf" in response.text().lower()
        if csrf_refused and self.access.how() != "login":  # api/libs/token.py CSRF_WHITE_LIST: the draft only
            response, source = self._call("GET", f"{app}/draft"), "draft"
        if response.status >= 400:
            raise ConsoleError(f"reading the app's {source} workflow: " + error_line(response.status, response.text()))
        try:
            workflow = json.loads(response.text())
        except ValueError:
            raise ConsoleError(f"the app's {source} workflow is not JSON") from None
        if workflow is None:
            raise ConsoleError("the app has no published workflow (publish it in Dify first)")
        if not isinstance(workflow, dict):
            raise ConsoleError(f"the app's {source} workflow is not a JSON object")
        return [v for v in workflow.get("environment_variables") or [] if isinstance(v, dict)], source


def read_catalog_variable(access: ConsoleAccess, name: str, deadline: float) -> tuple[str | None, str]:
    """(the value of environment variable ``name``, None when the app has none; where it was read)."""
    client = ConsoleClient(access, deadline)
    client.sign_in()
    variables, source = client.environment()
    value = next((v.get("value") for v in variables if v.get("name") == name), None)
    if value == HIDDEN_VALUE:
        raise ConsoleError(f"the app's {name} is a secret variable: the console shows it masked")
    return (value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False)), source


__all__ = ["ConsoleAccess", "ConsoleClient", "ConsoleError", "read_catalog_variable", "error_line"]
