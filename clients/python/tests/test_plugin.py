"""The pytest plugin as a project uses it: with $CXSHELL_URL, cx_world is the running world."""

import os
import subprocess
import sys
import textwrap


def test_cxshell_url_uses_the_running_world_and_resets_it_per_test(cx_world, tmp_path):
    cx_world.devices.create("web", ready=False)  # left over: the inner session's reset clears it
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        def test_first(cx_world):
            assert cx_world.devices.list() == []
            cx_world.devices.create("web", ready=False, bundle="com.example.inner")

        def test_second(cx_world):
            assert cx_world.devices.list() == []
            cx_world.devices.create("ios", ready=False)
    """))
    environment = dict(os.environ, CXSHELL_URL=cx_world.url)
    environment.pop("CXSHELL_BINARY", None)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         capture_output=True, text=True, env=environment, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout
    # The inner session used this world (and left it running): its last device is here.
    assert [device["platform"] for device in cx_world.devices.list()] == ["ios"]
