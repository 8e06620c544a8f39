"""The shared demo's upload cap, through a real ``streamlit run`` server over HTTP.

The page checks an upload's size only after Streamlit has accepted it, so the cap must hold
at the server: Streamlit's upload endpoint (``PUT /_stcore/upload_file/<session>/<file>``)
refuses a body over ``server.maxUploadSize``. These tests open a real session (a websocket
that asks for a script run), then PUT files straight to the endpoint as a hostile visitor
would, bypassing the browser's own check.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import http.cookiejar
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser import streamlit_server

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024

websockets = pytest.importorskip("websockets")


def server(tmp_path: Path, launch: list[str]) -> contextlib.AbstractContextManager[str]:
    """A demo-mode server on 127.0.0.1 started with ``launch`` (+ port args); its base URL."""
    env = {
        "CONTEXTLENS_DEMO": "1",
        "CONTEXTLENS_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHON": sys.executable,
    }
    return streamlit_server(env, timeout=120, launch=launch, log_path=tmp_path / "server.log")


async def _open_session(url: str) -> tuple[ClientConnection, str | None]:  # (websocket, id)
    """A live session, as a browser opens one: connect, ask for a run of the home page."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ws = await websockets.connect(
        url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"], max_size=None
    )
    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    await ws.send(msg.SerializeToString())
    session_id, finished = None, False
    while not finished:  # until the home page's script run is over
        fwd = ForwardMsg()
        fwd.ParseFromString(await asyncio.wait_for(ws.recv(), 120))
        kind = fwd.WhichOneof("type")
        if kind == "new_session":
            session_id = fwd.new_session.initialize.session_id
        finished = kind == "script_finished"
    return ws, session_id


def put_file(url: str, session_id: str, n_bytes: int) -> int:
    """PUT a file of ``n_bytes`` to the upload endpoint (with the XSRF cookie and header a
    browser sends); the HTTP status. The server may answer 413 and close the connection
    before the whole body is sent: the status is then read after the broken send."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{url}/_stcore/health").read()
    token = next((c.value for c in jar if c.name == "_streamlit_xsrf"), None)
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.conllu"'
            "\r\nContent-Type: text/plain\r\n\r\n"
        ).encode()
        + b"x" * n_bytes
        + f"\r\n--{boundary}--\r\n".encode()
    )
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.putrequest("PUT", f"/_stcore/upload_file/{session_id}/{uuid.uuid4().hex}")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        conn.putheader("Content-Length", str(len(body)))
        if token:
            conn.putheader("X-Xsrftoken", token)
            conn.putheader("Cookie", f"_streamlit_xsrf={token}")
        conn.endheaders()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.send(body)
        return conn.getresponse().status
    finally:
        conn.close()


def _statuses(url: str, sizes: list[int]) -> list[int]:
    async def go() -> list[int]:
        ws, session_id = await _open_session(url)
        try:
            loop = asyncio.get_running_loop()
            return [await loop.run_in_executor(None, put_file, url, session_id, n) for n in sizes]
        finally:
            await ws.close()

    return asyncio.run(go())


@pytest.mark.slow
def test_demo_launch_script_makes_the_server_refuse_over_cap_uploads(tmp_path):
    with server(tmp_path, ["sh", "deploy/run_demo.sh"]) as url:
        over, under = _statuses(url, [3 * MB, 1 * MB])
    assert over == 413  # refused by the server itself, before the page ever sees it
    assert under == 204


@pytest.mark.slow
def test_demo_mode_lowers_a_forgotten_server_cap_at_start_up(tmp_path):
    # Launched without --server.maxUploadSize (Streamlit's default is 200 MB): the first
    # script run applies the demo cap to the running server.
    plain = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    with server(tmp_path, plain) as url:
        over, under = _statuses(url, [3 * MB, 1 * MB])
    assert over == 413
    assert under == 204
    assert "lowered to the demo cap" in (tmp_path / "server.log").read_text()
