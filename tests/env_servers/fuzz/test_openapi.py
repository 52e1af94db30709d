"""Schemathesis against each game's OpenAPI schema, on a live loopback server: every operation
gets generated valid and invalid requests, and every reply must be no 5xx and conform to the
schema (status code, content type, body). The server stays healthy throughout."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.env_servers.fuzz.budget import EXAMPLES
from tests.live import LiveServer, live_server

pytestmark = pytest.mark.fuzz

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
"""Schemathesis's default checks less two that judge what a schema cannot say: a schema-valid
reset may still name no real word or an incomplete puzzle (a 422 is right), and ``/mcp``
answers a malformed JSON-RPC body with a JSON-RPC error and 200, as JSON-RPC over HTTP and
OpenEnv do."""


@pytest.fixture(scope="module", params=["wordle", "countdown"])
def game_server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    with live_server(request.param) as server:
        yield server


@pytest.mark.parametrize("mode", list(schemathesis.GenerationMode), ids=str)
def test_every_operation_answers_without_5xx_and_as_documented(
    game_server: LiveServer, mode: schemathesis.GenerationMode
) -> None:
    schema = schemathesis.openapi.from_url(f"{game_server.url}/openapi.json")
    operations = len(list(schema.get_all_operations()))

    @given(case=schema.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES.openapi * operations,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=EXAMPLES.derandomize,
        database=None,
    )
    def answered_as_documented(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=game_server.url, checks=CHECKS)

    answered_as_documented()
    assert httpx.get(f"{game_server.url}/health").status_code == 200
