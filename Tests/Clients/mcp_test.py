"""`cxshell mcp` driven by the official MCP Python SDK's stdio client, as an agent's host
would: initialize, list the tools, call each once; a world's refusal is a tool result with
isError and the world's sentence word for word. Once against a world of its own (stopped
when the client goes), once against a running one. Prints one line of totals."""

import asyncio
import json
import os
import subprocess

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from world import SHELL, Shell, run_checks

TOOLS = {"world_summary", "list_devices", "create_devices", "get_device", "device_action", "send_apns", "send_fcm",
         "read_log", "wait_for_log", "add_chaos_rule", "remove_chaos_rule", "list_chaos_rules", "advance_clock",
         "reset"}


def text(result):
    return "".join(part.text for part in result.content)


async def session_calls(arguments, work):
    params = StdioServerParameters(command=SHELL, args=["mcp", *arguments], env={"PATH": os.environ["PATH"]})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            assert initialized.server_info.name == "cxshell", initialized
            tools = (await session.list_tools()).tools
            assert {tool.name for tool in tools} == TOOLS, [tool.name for tool in tools]
            schemas = {tool.name: tool.input_schema for tool in tools}
            # From the OpenAPI document: the device creation body and the chaos rule.
            assert schemas["create_devices"]["properties"]["platform"]["enum"] == ["ios", "android", "web"]
            assert "then" in schemas["add_chaos_rule"]["required"]

            async def call(name, **arguments):
                return await session.call_tool(name, arguments)

            made = await call("create_devices", platform="android", ready=True)
            assert not made.is_error, text(made)
            android = json.loads(text(made))["devices"][0]
            assert android["device"] == "d1" and android["token"]
            ios = json.loads(text(await call("create_devices", platform="ios", ready=True)))["devices"][0]
            listed = json.loads(text(await call("list_devices", platform="android")))
            assert [device["device"] for device in listed["devices"]] == ["d1"]
            assert json.loads(text(await call("get_device", device="d2")))["platform"] == "ios"
            killed = await call("device_action", device="d1", action="kill")
            assert not killed.is_error and '"state":"not_running"' in text(killed), text(killed)
            sent = await call("send_fcm", body={"message": {"token": android["token"],
                                                            "notification": {"title": "from an agent"}}})
            assert not sent.is_error and "shown in the tray" in text(sent), text(sent)
            apns = await call("send_apns", device="d2", headers={"apns-topic": "com.example.app"},
                              body={"aps": {"alert": "hi"}})
            assert not apns.is_error, text(apns)
            focused = await call("device_action", device="d2", action="focus_on")
            assert not focused.is_error and '"focus":true' in text(focused), text(focused)
            pressed = await call("device_action", device="d2", action="tap", which="t1", button="accept")
            assert pressed.is_error and "tray entry t1 has no action 'accept'; it has no actions" in text(pressed), \
                text(pressed)
            log = json.loads(text(await call("read_log", device="d1")))
            assert any(entry["status"] == 200 for entry in log["entries"]), log
            waited = json.loads(text(await call("wait_for_log", q="from an agent", wait=5)))
            assert len(waited["entries"]) == 1, waited
            rule = json.loads(text(await call("add_chaos_rule", service="fcm", then={"answer": "UNAVAILABLE"})))
            assert rule["rule"]["id"] == "c1"
            assert len(json.loads(text(await call("list_chaos_rules")))["rules"]) == 1
            assert not (await call("remove_chaos_rule", id="c1")).is_error
            clock = await call("advance_clock", advance_ms=60000)
            assert '"advanced_ms":60000' in text(clock), text(clock)
            summary = json.loads(text(await call("world_summary")))
            assert summary["devices"] == 2

            # Refusals: the world's sentence, word for word, as a tool result.
            missing = await call("get_device", device="d9")
            assert missing.is_error and text(missing) == "there is no device 'd9'", text(missing)
            acting = await call("device_action", device="d9", action="launch")
            assert acting.is_error and text(acting).startswith("there is no device 'd9'"), text(acting)
            bad = await call("add_chaos_rule", service="apns", then={"answer": "Nope"})
            assert bad.is_error and "'Nope' is not an answer apns gives" in text(bad), text(bad)
            wrong = await call("device_action", device="d1", action="dance")
            assert wrong.is_error and text(wrong).startswith('"action" must be one of'), text(wrong)

            reset = json.loads(text(await call("reset", keep=["log"])))
            assert reset["cleared"]["devices"] == 2, reset
            return summary


def a_world_of_its_own_is_started_and_stopped_with_the_client(work):
    before = set(os.listdir("/proc"))
    asyncio.run(session_calls([], work))
    # The world it started is gone once the client went.
    for pid in set(os.listdir("/proc")) - before:
        try:
            command = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        assert not (command[:2] == [SHELL.encode(), b"serve"] and b"cxshell-mcp-" in b" ".join(command)), command


def a_running_world_is_driven(work):
    shell = Shell(work)
    try:
        summary = asyncio.run(session_calls(["--url", f"http://127.0.0.1:{shell.port}"], work))
        assert summary["listening"] == f"127.0.0.1:{shell.port}"
    finally:
        shell.stop()


def a_world_that_is_not_there_is_a_tool_error(work):
    async def run():
        params = StdioServerParameters(command=SHELL, args=["mcp", "--url", "http://127.0.0.1:1"],
                                       env={"PATH": os.environ["PATH"]})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("world_summary", {})
                assert result.is_error and "did not answer" in text(result), text(result)
    asyncio.run(run())
    bad = subprocess.run([SHELL, "mcp", "--url", "ftp://x"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "the URL must start with http://" in bad.stderr, bad.stderr


if __name__ == "__main__":
    raise SystemExit(run_checks([a_world_of_its_own_is_started_and_stopped_with_the_client, a_running_world_is_driven,
                                 a_world_that_is_not_there_is_a_tool_error], label="mcp"))
