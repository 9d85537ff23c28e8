"""``tempo-agents api``: tools, agents and runs of a running HTTP API (``serve`` or ``dev``).

Output is JSON when stdout is not a terminal (``{"data": ...}``; streams as one chunk per line) and
readable text when it is. Failures print ``{"error": {"code", "message", "details"}}`` on stderr (one
readable line at a terminal) and exit 1, with the reference CLI's codes and messages.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from tempo_agents.cli.api.audit import add_audit_command
from tempo_agents.cli.api.client import DEFAULT_URL, ApiClient, ApiCommandError, Handler, parse_headers
from tempo_agents.cli.api.output import Output, table
from tempo_agents.cli.api.schedules import add_schedule_group

__all__ = ["add_command"]


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``api`` and its ``tool``, ``agent`` and ``run`` groups."""
    api = commands.add_parser(
        "api",
        help="call a running HTTP API: tools, agents and runs",
        description="A client of the HTTP API that tempo-agents serve and tempo-agents dev start.",
    )
    api.add_argument("--url", default=os.environ.get("TEMPO_AGENTS_URL", DEFAULT_URL), help="server base URL")
    api.add_argument("--header", action="append", default=[], metavar='"NAME: VALUE"', help="extra request header")
    api.add_argument(
        "--token",
        default=os.environ.get("TEMPO_AGENTS_API_TOKEN"),
        help="bearer token of a server started with one (default $TEMPO_AGENTS_API_TOKEN)",
    )
    api.add_argument("--timeout", type=int, default=30_000, metavar="MS", help="request timeout (default 30000)")
    groups = api.add_subparsers(dest="group", required=True, metavar="GROUP")

    tool = groups.add_parser("tool", help="list, show and execute tools").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    _command(tool, "list", _tool_list, "every tool")
    _command(tool, "get", _tool_get, "one tool").add_argument("tool_id", nargs="?", metavar="ID")
    execute = _command(tool, "execute", _tool_execute, "run a tool directly, outside any run")
    execute.add_argument("tool_id", nargs="?", metavar="ID")
    execute.add_argument("input", nargs="?", metavar="JSON", help="the tool's input, one JSON object")
    execute.add_argument("--schema", action="store_true", help="print the tool's input schema and stop")

    agent = groups.add_parser("agent", help="list agents, start runs").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    _command(agent, "list", _agent_list, "every agent")
    for name, handler, text in (("stream", _agent_stream, "start a run and print its stream"),
                                ("generate", _agent_generate, "start a run and print its result")):  # fmt: skip
        start = _command(agent, name, handler, text)
        start.add_argument("agent_id", metavar="AGENT")
        start.add_argument("prompt", metavar="PROMPT")
        start.add_argument("--run-id", help="choose the run id")
        start.add_argument("--thread", help="memory thread id (with --resource)")
        start.add_argument("--resource", help="memory resource id")
        start.add_argument("--max-steps", type=int)

    run = groups.add_parser("run", help="find, inspect, follow and answer runs").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    listing = _command(run, "list", _run_list, "runs, newest first")
    listing.add_argument("--status", help="running, suspended, completed, failed, cancelled …")
    listing.add_argument("--agent")
    listing.add_argument("--thread")
    listing.add_argument("--resource")
    listing.add_argument("--per-page", type=int, default=20)
    listing.add_argument("--cursor", help="nextCursor of the previous page")
    _command(run, "show", _run_show, "one run").add_argument("run_id", metavar="RUN")
    watch = _command(run, "watch", _run_watch, "follow a run to its end (across suspensions)")
    watch.add_argument("run_id", metavar="RUN")
    watch.add_argument("--offset", type=int, default=0, help="first journal offset to show")
    resume = _command(run, "resume", _run_resume, "resume a suspended call")
    resume.add_argument("run_id", metavar="RUN")
    resume.add_argument("input", nargs="?", metavar="JSON", help="the resume data")
    resume.add_argument("--tool-call-id")
    approve = _command(run, "approve", _run_approve, "approve a call waiting for approval")
    approve.add_argument("run_id", metavar="RUN")
    approve.add_argument("--tool-call-id")
    approve.add_argument("--args", metavar="JSON", help="approve with these arguments instead (one JSON object)")
    decline = _command(run, "decline", _run_decline, "decline a call waiting for approval")
    decline.add_argument("run_id", metavar="RUN")
    decline.add_argument("--tool-call-id")
    decline.add_argument("--reason")
    _command(run, "cancel", _run_cancel, "cancel a run").add_argument("run_id", metavar="RUN")
    steer = _command(run, "steer", _run_steer, "send a message into a running run's next model step")
    steer.add_argument("run_id", metavar="RUN")
    steer.add_argument("message", metavar="MESSAGE")
    _command(run, "interrupt", _run_interrupt, "stop a run at its next step boundary").add_argument(
        "run_id", metavar="RUN"
    )
    _command(run, "rollback", _run_rollback, "cancel a run and remove its messages from its thread").add_argument(
        "run_id", metavar="RUN"
    )
    fork = _command(run, "fork", _run_fork, "start a new run from a run's transcript at a step, with edits")
    fork.add_argument("run_id", metavar="RUN")
    fork.add_argument("--at-step", type=int, help="the model step the fork asks again (default: the last good one)")
    fork.add_argument("--message", action="append", help="a user message added after the copied steps (repeatable)")
    fork.add_argument("--agent", help="run the fork on another registered agent")
    fork.add_argument("--instructions", help="added to the agent's instructions")
    fork.add_argument("--reuse-tools", action="store_true", help="answer calls the run made alike from its outcomes")
    fork.add_argument("--rerun", action="append", default=[], metavar="TOOL", help="a tool that runs even so")
    _command(run, "retry", _run_retry, "run a failed run again from its last good step").add_argument(
        "run_id", metavar="RUN"
    )
    compare = _command(run, "compare", _run_compare, "two runs side by side, from the first step they differ")
    compare.add_argument("a", metavar="RUN_A")
    compare.add_argument("b", metavar="RUN_B")

    add_schedule_group(groups, _command)
    add_audit_command(groups, _command)


def _command(
    group: argparse._SubParsersAction[argparse.ArgumentParser], name: str, handler: Handler, text: str
) -> argparse.ArgumentParser:
    parser = group.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")

    async def run(args: argparse.Namespace) -> int:
        return await _dispatch(handler, args)

    parser.set_defaults(handler=run)
    return parser


async def _dispatch(handler: Handler, args: argparse.Namespace) -> int:
    output = Output()
    try:
        headers = parse_headers(args.header)
        if args.token and not any(name.lower() == "authorization" for name in headers):
            headers["Authorization"] = f"Bearer {args.token}"
        async with ApiClient(args.url, headers=headers, timeout_ms=args.timeout) as client:
            return await handler(client, args, output)
    except ApiCommandError as error:
        readable = f"error: {error.message}"
        if error.code == "HTTP_ERROR" and isinstance(error.details, dict):
            body = error.details.get("body")
            detail = body.get("error") if isinstance(body, dict) else body
            readable += f": {detail}" if detail else ""
        output.error(error.to_json(), readable)
        return 1


def _json_object(text: str | None) -> dict[str, Any]:
    if text is None:
        raise ApiCommandError("MISSING_INPUT", "Command requires a single inline JSON input argument")
    try:
        value = json.loads(text)
    except ValueError:
        raise ApiCommandError("INVALID_JSON", "Input must be valid JSON") from None
    if not isinstance(value, dict):
        raise ApiCommandError("INVALID_JSON", "Input JSON must be an object")
    return value


def _required(value: str | None, name: str) -> str:
    if not value:
        raise ApiCommandError("MISSING_ARGUMENT", f"Missing required argument <{name}>")
    return value


# Tools ------------------------------------------------------------------------------------------


async def _tool_list(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    tools = await client.request("GET", "tools")
    output.result(
        tools, lambda d: table([[key, v.get("description", "")] for key, v in d.items()], ["ID", "DESCRIPTION"])
    )
    return 0


def _input_schema(tool: dict[str, Any]) -> Any:
    text = tool.get("inputSchema")
    return json.loads(text)["json"] if isinstance(text, str) else None


async def _tool_get(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    tool_id = _required(args.tool_id, "toolId")
    tool = await client.request("GET", f"tools/{tool_id}")

    def readable(data: dict[str, Any]) -> str:
        lines = [f"{data['id']}: {data.get('description', '')}"]
        if data.get("requireApproval"):
            lines.append("requires approval")
        lines.append("input schema: " + json.dumps(_input_schema(data), indent=2))
        return "\n".join(lines)

    output.result(tool, readable)
    return 0


async def _tool_execute(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    tool_id = _required(args.tool_id, "toolId")
    if args.schema:
        schema = _input_schema(await client.request("GET", f"tools/{tool_id}"))
        output.result(schema, lambda d: json.dumps(d, indent=2))
        return 0
    given = _json_object(args.input)
    body = given if "data" in given else {"data": given}
    result = await client.request("POST", f"tools/{tool_id}/execute", json_body=body)
    if isinstance(result, dict) and result.get("error") is True and "message" in result:
        error = ApiCommandError(
            "VALIDATION_ERROR", str(result["message"]), {"validationErrors": result.get("validationErrors")}
        )
        output.error(error.to_json(), str(result["message"]))
        return 1
    output.result(result, lambda d: json.dumps(d, indent=2, ensure_ascii=False))
    return 0


# Agents -----------------------------------------------------------------------------------------


async def _agent_list(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    agents = await client.request("GET", "agents", params={"partial": "true"})
    output.result(
        agents,
        lambda d: table(
            [[key, v.get("name", ""), ", ".join(v.get("tools", {}))] for key, v in d.items()], ["ID", "NAME", "TOOLS"]
        ),
    )
    return 0


def _start_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": args.prompt}
    if args.run_id:
        body["runId"] = args.run_id
    if args.thread or args.resource:
        body["memory"] = {"thread": args.thread, "resource": args.resource}
    if args.max_steps:
        body["maxSteps"] = args.max_steps
    return body


async def _print_events(client: ApiClient, output: Output, method: str, path: str, **request: Any) -> int:
    async for chunk in client.events(method, path, **request):
        output.chunk(chunk)
    return 1 if output.end_stream() else 0


async def _agent_stream(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    return await _print_events(client, output, "POST", f"agents/{args.agent_id}/stream", json_body=_start_body(args))


async def _agent_generate(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    result = await client.request("POST", f"agents/{args.agent_id}/generate", json_body=_start_body(args))

    def readable(data: dict[str, Any]) -> str:
        lines = [str(data.get("text", "")), f"(run {data.get('runId')}, finish reason {data.get('finishReason')})"]
        if data.get("suspendPayload"):
            lines.append("waiting: " + json.dumps(data["suspendPayload"], ensure_ascii=False))
        return "\n".join(lines)

    output.result(result, readable)
    return 1 if result.get("finishReason") == "error" else 0


# Runs -------------------------------------------------------------------------------------------


async def _run_list(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    params = {
        key: value
        for key, value in {
            "status": args.status,
            "agent": args.agent,
            "thread": args.thread,
            "resource": args.resource,
            "perPage": args.per_page,
            "cursor": args.cursor,
        }.items()
        if value is not None
    }
    page = await client.request("GET", "runs", params=params)

    def readable(data: dict[str, Any]) -> str:
        rows = [[r["runId"], r.get("agentId") or "", r["status"], r.get("startedAt") or ""] for r in data["runs"]]
        text = table(rows, ["RUN", "AGENT", "STATUS", "STARTED"])
        more = f"\nmore: --cursor {data['nextCursor']}" if data.get("nextCursor") else ""
        return f"{text}\n({data['total']} in all){more}"

    output.result(page, readable)
    return 0


async def _run_show(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    detail = await client.request("GET", f"runs/{args.run_id}")

    def readable(data: dict[str, Any]) -> str:
        lines = [f"run {data['runId']} (agent {data.get('agentId')}): {data['status']}"]
        for key in ("mode", "step", "threadId", "resourceId", "startedAt", "closedAt"):
            if data.get(key) is not None:
                lines.append(f"  {key}: {data[key]}")
        if data.get("usage"):
            lines.append(f"  usage: {json.dumps(data['usage'])}")
        for call in data.get("pending") or []:
            kind = "approval" if call.get("requiresApproval") else "suspended"
            shown = call.get("suspendPayload") if kind == "suspended" else call.get("args")
            lines.append(f"  waiting ({kind}): {call['toolName']} {call['toolCallId']} {json.dumps(shown)}")
        for task in data.get("tasks") or []:
            lines.append(f"  task [{task.get('status')}] {task.get('content')}")
        if data.get("queryError"):
            lines.append(f"  (queries failed: {data['queryError']})")
        return "\n".join(lines)

    output.result(detail, readable)
    return 0


async def _run_watch(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    return await _print_events(client, output, "GET", f"runs/{args.run_id}/stream", params={"offset": args.offset})


def _accepted(data: dict[str, Any]) -> str:
    offset = data.get("offset")
    return f"accepted; follow it with: tempo-agents api run watch {data['runId']} --offset {offset}"


async def _run_resume(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    data = _json_object(args.input)
    body = {"resumeData": data, "toolCallId": args.tool_call_id}
    output.result(await client.request("POST", f"runs/{args.run_id}/resume", json_body=body), _accepted)
    return 0


async def _run_approve(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    body: dict[str, Any] = {"toolCallId": args.tool_call_id}
    if args.args is not None:
        body["args"] = _json_object(args.args)
    output.result(await client.request("POST", f"runs/{args.run_id}/approve", json_body=body), _accepted)
    return 0


async def _run_decline(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    body = {"toolCallId": args.tool_call_id, "reason": args.reason}
    output.result(await client.request("POST", f"runs/{args.run_id}/decline", json_body=body), _accepted)
    return 0


async def _run_cancel(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    result = await client.request("POST", f"runs/{args.run_id}/cancel")
    output.result(result, lambda d: f"cancel requested for run {d['runId']}")
    return 0


async def _run_steer(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    result = await client.request("POST", f"runs/{args.run_id}/steer", json_body={"message": args.message})
    output.result(
        result,
        lambda d: (
            f"delivered into step {d['step'] + 1} of run {d['runId']}"
            if d["status"] == "delivered"
            else f"kept for run {d['runId']}: the model reads it at the step after the waiting call is answered"
        ),
    )
    return 0


async def _run_interrupt(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    result = await client.request("POST", f"runs/{args.run_id}/interrupt")
    output.result(result, lambda d: f"interrupt requested for run {d['runId']}")
    return 0


async def _run_rollback(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    result = await client.request("POST", f"runs/{args.run_id}/rollback")
    output.result(
        result,
        lambda d: f"rolled back run {d['runId']}: {d['removedMessages']} messages removed from thread {d['threadId']}",
    )
    return 0


def _forked(data: dict[str, Any]) -> str:
    origin = data.get("forkOf") or {}
    return (
        f"started run {data['runId']} (forked from {origin.get('runId')} at step {origin.get('step')}); "
        f"follow it with: tempo-agents api run watch {data['runId']}"
    )


async def _run_fork(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    body: dict[str, Any] = {"reuse": "tools" if args.reuse_tools else "none", "rerun": args.rerun}
    for field, value in (
        ("atStep", args.at_step),
        ("messages", args.message),
        ("agentId", args.agent),
        ("instructions", args.instructions),
    ):
        if value is not None:
            body[field] = value
    output.result(await client.request("POST", f"runs/{args.run_id}/fork", json_body=body), _forked)
    return 0


async def _run_retry(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    output.result(await client.request("POST", f"runs/{args.run_id}/retry"), _forked)
    return 0


async def _run_compare(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    result = await client.request("GET", "runs/compare", params={"a": args.a, "b": args.b})

    def readable(data: dict[str, Any]) -> str:
        first = data.get("firstDifferentStep")
        lines = ["the runs are the same" if first is None else f"the runs differ from step {first}"]
        for step in data.get("steps", []):
            if step["same"]:
                continue
            lines.append(f"step {step['step']}:")
            for side in ("a", "b"):
                shown = step.get(side) or {}
                calls = ", ".join(f"{c['toolName']}({json.dumps(c['args'])})" for c in shown.get("toolCalls", []))
                lines.append(f"  {side}: {shown.get('text')!r}" + (f" calls {calls}" if calls else ""))
        for side in ("a", "b"):
            run = data[side]
            lines.append(f"{side} {run['runId']}: usage {run.get('usage')}, {run.get('durationMs')} ms")
        return "\n".join(lines)

    output.result(result, readable)
    return 0
