"""An approval that waits for days and reaches a person on Slack: a refund waits for alice, the Slack app's bot
posts the request with Approve and Decline buttons, and alice's click (which Slack sends to this program's HTTP
API, signed) lets the run go on. Nobody answers in three days: the refund is declined; a reminder every day."""

import asyncio
import os
from datetime import timedelta

import uvicorn
from pydantic import BaseModel

from tempo_agents import (
    Agent,
    AnswerLinks,
    App,
    NotificationSettings,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    SlackChannel,
    ToolContext,
    create_server,
    create_tool,
    run_program,
)


class RefundIn(BaseModel):
    order: str
    amount: int


async def refund(data: RefundIn, ctx: ToolContext) -> dict[str, object]:
    return {"refunded": data.amount, "order": data.order}  # runs only once alice has approved


refund_tool = create_tool(
    id="refund",
    description="Refunds an order",
    input_schema=RefundIn,
    execute=refund,
    require_approval=True,
    approvers=["alice"],  # a click by anyone else is refused in Slack itself
    suspend_expires_in=timedelta(days=3),  # declined if nobody answers in three days
    remind_every=timedelta(days=1),  # the request posted again every day until then
)
model = ScriptedModel(  # a real model instead: model="openai/gpt-4.1-mini" (and OPENAI_API_KEY)
    [
        ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {"order": "1187", "amount": 120})]),
        ScriptedResponse(text="Refunded 120 on order 1187."),
    ]
)
slack = SlackChannel(
    name="slack",
    bot_token=os.environ["SLACK_BOT_TOKEN"],  # xoxb-...: the app's Bot User OAuth Token
    slack_channel=os.environ["SLACK_CHANNEL"],  # the channel's id; the bot must be a member
    signing_secret=os.environ["SLACK_SIGNING_SECRET"],  # checks that a click comes from Slack
    users={os.environ["SLACK_ALICE"]: "alice"},  # alice's Slack user id -> the principal "alice"
    api_url=os.environ.get("SLACK_API_URL", "https://slack.com/api"),
)
app = App(
    agents=[Agent(id="support", instructions="You refund orders.", model=model, tools={"refund": refund_tool})],
    notifications=NotificationSettings(channels=[slack], public_url=os.environ["PUBLIC_URL"]),
    # the buttons carry signed answers: a click is checked against the link's signature and Slack's
    answer_links=AnswerLinks([os.environ["LINK_SECRET"]], base_url=os.environ["PUBLIC_URL"]),
)


async def main() -> None:
    await app.connect("localhost:7233")
    port = int(os.environ.get("PORT", "8000"))
    api = uvicorn.Server(uvicorn.Config(create_server(app), host="127.0.0.1", port=port, log_level="warning"))
    async with app.worker():
        serving = asyncio.create_task(api.serve())  # Slack posts each click to PUBLIC_URL/api/slack/interactions
        first = await app.agent("support").generate("Refund order 1187, 120 EUR")
        print(first.finish_reason, flush=True)  # suspended: the request is in the Slack channel, with its buttons
        done = await app.attach(first.run_id, follow="run").result()  # minutes or days later: alice's click
        print(done.finish_reason, done.text)
        api.should_exit = True
        await serving


run_program(main())  # asyncio.run(main()), then the process ends at once (see run_program)
