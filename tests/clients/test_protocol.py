"""The sans-I/O protocol both transports drive: every decision, checked without a socket."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from websockets.exceptions import ConnectionClosedError
from websockets.frames import Close

from clients.errors import (
    CapacityError,
    ClientError,
    ConnectionLost,
    InvalidRequestError,
    RequestTimeout,
    SessionError,
)
from clients.protocol import (
    RETRY_BACKOFF,
    ConnectionOptions,
    HTTPSession,
    WebSocketSession,
    ws_url,
)
from env_servers.core.protocol import (
    EXT_HTTP_SESSIONS,
    EXT_REQUEST_ID,
    EXT_RESUME,
    SESSION_HEADER,
    WS_CLOSE_SESSION_GONE,
    WS_CLOSE_TRY_LATER,
)

OURS = frozenset({EXT_REQUEST_ID, EXT_RESUME, EXT_HTTP_SESSIONS})


def session(extensions: frozenset[str] = OURS, **options: Any) -> WebSocketSession:
    return WebSocketSession("http://host:1", ConnectionOptions(extensions, **options))


def frame(**fields: Any) -> bytes:
    return orjson.dumps(fields)


def closed(code: int) -> ConnectionClosedError:
    return ConnectionClosedError(Close(code, ""), None)


def test_urls() -> None:
    assert ws_url("http://h:1") == "ws://h:1/ws"
    assert ws_url("https://u-n.hf.space/") == "wss://u-n.hf.space/ws"
    assert ws_url("ws://h/prefix/ws") == "ws://h/prefix/ws"


def test_ids_only_when_advertised() -> None:
    ours, plain = session(), session(frozenset())
    first, second = ours.request("step", {"guess": "crane"}), ours.request("state")
    assert orjson.loads(first.frame) == {"type": "step", "data": {"guess": "crane"}, "id": 1}
    assert orjson.loads(second.frame) == {"type": "state", "id": 2}
    request = plain.request("step", {"guess": "crane"})
    assert request.id is None and "id" not in orjson.loads(request.frame)


def test_stale_replies_are_skipped_and_reset_names_the_session() -> None:
    ours = session()
    ours.request("step")  # id 1, timed out earlier
    request = ours.request("reset", {"seed": 1})
    assert ours.receive(request, frame(type="observation", data={"done": False}, id=1)) is None
    reply = ours.receive(request, frame(type="observation", data={"session_id": "s1"}, id=2))
    assert reply is not None and reply.result() == {"session_id": "s1"}
    assert ours.session_id == "s1" and ours.connect_url() == "ws://host:1/ws?session_id=s1"


def test_error_frames_and_refusals_at_connect() -> None:
    ours = session()
    ours.session_id = "s1"
    ours.connected()
    request = ours.request("step", {"guess": 1})
    error = {"code": "VALIDATION_ERROR", "message": "bad action"}
    reply = ours.receive(request, frame(type="error", data=error, id=request.id))
    assert reply is not None and not reply.drop
    with pytest.raises(InvalidRequestError, match="bad action"):
        reply.result()
    # the first reply on a new socket, without an id: the server refused the connection
    refusal = {"code": "CAPACITY_REACHED", "message": "full"}
    reply = ours.receive(request, frame(type="error", data=refusal))
    assert reply is not None and reply.drop and ours.session_id is None
    with pytest.raises(CapacityError):
        reply.result()


def test_a_timeout_drops_the_socket_only_without_ids() -> None:
    ours, plain = session(message_timeout=2.0), session(frozenset())
    reply = ours.timed_out(ours.request("step"))
    assert not reply.drop and isinstance(reply.error, RequestTimeout)
    assert "2 s" in str(reply.error)
    assert plain.timed_out(plain.request("step")).drop


def test_retries_resume_and_back_off_until_the_limit() -> None:
    ours = session(max_retries=2)
    ours.session_id = "s1"
    request = ours.request("step")
    delays = [ours.lost(request, OSError("reset by peer"), attempt) for attempt in (0, 1)]
    assert delays == [RETRY_BACKOFF, RETRY_BACKOFF * 2] and ours.reconnects == 2
    with pytest.raises(ConnectionLost, match="lost during 'step'"):
        ours.lost(request, OSError("reset by peer"), 2)


def test_without_resume_only_a_reset_is_retried() -> None:
    plain = session(frozenset())
    plain.session_id = "s1"
    with pytest.raises(ConnectionLost, match="cannot resume"):
        plain.lost(plain.request("step"), OSError(), 0)
    assert plain.lost(plain.request("reset"), OSError(), 0) == RETRY_BACKOFF


@pytest.mark.parametrize(
    ("code", "error"), [(WS_CLOSE_SESSION_GONE, SessionError), (WS_CLOSE_TRY_LATER, CapacityError)]
)
def test_close_codes_of_a_refusal(code: int, error: type[Exception]) -> None:
    ours = session()
    ours.session_id = "s1"
    with pytest.raises(error):
        ours.lost(ours.request("step"), closed(code), 0)
    assert ours.session_id is None


def test_http_session() -> None:
    http = HTTPSession("http://host:1/", ConnectionOptions(OURS))
    reset = http.reset({"seed": 1})
    assert (reset.method, reset.path, reset.json) == ("POST", "/reset", {"seed": 1})
    assert http.receive(reset, 200, b'{"session_id":"s1","done":false}')["done"] is False
    assert http.step({"guess": "crane"}).json == {"session_id": "s1", "action": {"guess": "crane"}}
    assert http.state().headers == {SESSION_HEADER: "s1"}
    body = b'{"error":{"code":"SESSION_ERROR","message":"over"}}'
    with pytest.raises(SessionError, match="over"):
        http.receive(http.step({}), 409, body)
    close = http.close()
    assert close is not None and close.path == "/sessions/s1" and http.close() is None
    with pytest.raises(ClientError, match="stateful HTTP"):
        HTTPSession("http://host:1", ConnectionOptions(frozenset({EXT_REQUEST_ID})))
