"""The unchanged official client, ``@mastra/client-js`` 1.47.0 from npm, against ``tempo-agents dev``.

``tests/support/clients/official_client.mjs`` makes the calls and prints what it got; ``.ci/run`` installs the
client (``npm ci`` in ``tests/support/clients``, which ``scripts/test`` runs). Without Node or the installed client the
test fails and says what to install.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from tests.support.cli_processes import CLI, read_dev_banner
from tests.support.clients import start_node_client
from tests.support.http_api import EXAMPLE


async def test_official_client_against_dev(tmp_path: Path) -> None:
    dev = await asyncio.create_subprocess_exec(
        *CLI, "dev", "--port", "0", "--ui-port", "0", "--api-port", "0",
        "--app", f"{EXAMPLE}:app", cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        url = (await read_dev_banner(dev)).get("HTTP API", "").removesuffix("/api")
        node = await start_node_client("official_client.mjs", {"TEMPO_URL": url})
        out, err = await asyncio.wait_for(node.communicate(), 120)
    finally:
        dev.send_signal(signal.SIGTERM)
        await asyncio.wait_for(dev.communicate(), 30)
    assert node.returncode == 0, err.decode()
    report = json.loads(out.decode().strip().splitlines()[-1])

    assert report["tools"] == ["weather-tool", "confirm-tool", "danger-tool", "boom-tool"]
    assert report["toolDetails"]["id"] == "weather-tool"
    assert report["executed"] == {"city": "Oslo", "temperature": 21}
    assert report["invalid"]["error"] is True and "validationErrors" in report["invalid"]
    assert report["unknownTool"] == {"name": "MastraClientError", "status": 404, "body": {"error": "Tool not found"}}
    assert report["agents"] == ["assistant"]
    assert report["agentTools"] == ["weather", "confirm", "danger", "boom"]
    assert report["agentTool"] == "weather-tool"

    assert report["weather"][0] == "start" and report["weather"][-1] == "finish"
    assert "tool-result" in report["weather"]
    assert report["weatherCall"] == {"toolCallId": "call-w1", "toolName": "weather", "args": {"city": "Oslo"}}
    assert report["weatherMessageId"]
    assert report["generated"]["finishReason"] == "stop" and report["generated"]["text"].startswith("Let me check.")
    assert report["generated"]["toolCall"]["toolName"] == "weather"

    assert report["suspended"]["suspendPayload"] == {"phase": "confirm", "amount": 990}
    assert report["suspendedRuns"] is True
    assert report["badResume"]["status"] == 422 and "validationErrors" in report["badResume"]["body"]
    assert report["resumed"][0] == "tool-result" and "start" not in report["resumed"]
    assert report["resumedResult"] == {"charged": 990}
    assert report["resumeRepeat"] == report["resumed"]
    assert report["resumeOther"]["status"] == 409

    assert report["approval"]["toolName"] == "danger"
    assert report["approved"][0] == "tool-result" and report["approved"][-1] == "finish"
    assert report["secondFinish"] == "suspended" and report["declined"] == "stop"
    assert report["denied"] == {"id": "call-d1", "approved": False, "reason": "never"}

    # a second stream on a thread whose run waits streams a new run at once; the waiting run is still listed
    assert report["threadNext"]["newRun"] is True
    assert report["threadNext"]["types"][0] == "start" and report["threadNext"]["types"][-1] == "finish"
    assert "tool-result" in report["threadNext"]["types"]
    assert report["threadSuspendedRuns"] is True
    assert report["threadResumed"] == {"charged": 990}

    assert "tool-error" in report["exploded"]
    assert "error" in report["modelError"] and report["modelError"][-1] == "finish"
    assert report["observed"] == report["weather"]
    assert report["unknownRun"]["status"] == 404
