"""The pytest plugin (entry point `pytest11`): the `cx_world` fixture.

One world per test session, reset before each test. `--cxshell-binary PATH` names the
binary to start (else `$CXSHELL_BINARY`, else PATH); `$CXSHELL_URL` (and
`$CXSHELL_API_TOKEN`) uses a world that is already running, as in a compose setup."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from ._world import World


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cxshell-binary", default=None, help="the cxshell binary the cx_world fixture starts")


@pytest.fixture(scope="session")
def cx_world_session(request: pytest.FixtureRequest) -> Iterator[World]:
    """The session's world: started once, or the one at $CXSHELL_URL."""
    url = os.environ.get("CXSHELL_URL")
    if url:
        world = World.connect(url, token=os.environ.get("CXSHELL_API_TOKEN"))
    else:
        world = World.start(binary=request.config.getoption("--cxshell-binary"))
    with world:
        yield world


@pytest.fixture
def cx_world(cx_world_session: World) -> World:
    """The session's world, reset: no devices, credentials, chaos rules, clock offset
    or log from an earlier test."""
    cx_world_session.reset()
    return cx_world_session
