"""The examples' shared step: a backend's environment pointed at the world."""

import pytest


@pytest.fixture
def backend_env(cx_world, monkeypatch):
    """The proxy and the CA, set as a backend process would have them."""
    for name, value in cx_world.proxy_env().items():
        monkeypatch.setenv(name, value)
    return cx_world
