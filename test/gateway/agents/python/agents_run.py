"""The OpenAI Agents SDK for Python run as a user runs it: OPENAI_BASE_URL and OPENAI_API_KEY in the
environment and everything else at its defaults, tracing included. Each mode prints one JSON line
for test/gateway/agents/agents-python.test.ts; OTHER_BASE_URL is a second gateway process on the
same Redis, where the second turn continues.

  python agents_run.py session MODEL        OpenAIConversationsSession, continued on the other process
  python agents_run.py previous MODEL       previous_response_id, continued on the other process
  python agents_run.py background MODEL     a background response polled to its end (official SDK)
  python agents_run.py cancel MODEL         a background response cancelled while it runs
"""

import asyncio
import json
import os
import sys

from openai import AsyncOpenAI

from agents import (
    Agent,
    OpenAIConversationsSession,
    Runner,
    function_tool,
    set_default_openai_client,
)

CALLS: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return f"It is 18°C and sunny in {city}."


def weather_agent(model: str) -> Agent:
    return Agent(
        name="Weather",
        instructions="Use the tool, then answer.",
        model=model,
        tools=[get_weather],
    )


def on_other_process() -> None:
    set_default_openai_client(AsyncOpenAI(base_url=os.environ["OTHER_BASE_URL"]))


async def session(model: str) -> dict:
    first = OpenAIConversationsSession()
    r1 = await Runner.run(weather_agent(model), "What is the weather in Lisbon?", session=first)
    conversation = first.session_id
    on_other_process()
    second = OpenAIConversationsSession(conversation_id=conversation)
    r2 = await Runner.run(weather_agent(model), "And in Porto?", session=second)
    items = await second.get_items()
    return {
        "conversation": conversation,
        "first": str(r1.final_output),
        "second": str(r2.final_output),
        "calls": CALLS,
        "item_types": [i.get("type", "message") for i in items],
    }


async def previous(model: str) -> dict:
    r1 = await Runner.run(weather_agent(model), "What is the weather in Lisbon?")
    on_other_process()
    r2 = await Runner.run(
        weather_agent(model), "And in Porto?", previous_response_id=r1.last_response_id
    )
    return {
        "first_response": r1.last_response_id,
        "second_response": r2.last_response_id,
        "second": str(r2.final_output),
        "calls": CALLS,
    }


async def background(model: str, cancel: bool) -> dict:
    client = AsyncOpenAI()
    created = await client.responses.create(model=model, input="Say hello", background=True)
    statuses = [created.status]
    if cancel:
        cancelled = await client.responses.cancel(created.id)
        statuses.append(cancelled.status)
    current = created
    while current.status in ("queued", "in_progress"):
        await asyncio.sleep(0.05)
        current = await client.responses.retrieve(created.id)
        if current.status != statuses[-1]:
            statuses.append(current.status)
    return {"id": created.id, "statuses": statuses, "output_text": current.output_text}


async def main() -> None:
    mode, model = sys.argv[1], sys.argv[2]
    if mode == "session":
        out = await session(model)
    elif mode == "previous":
        out = await previous(model)
    else:
        out = await background(model, cancel=mode == "cancel")
    print(json.dumps(out))


asyncio.run(main())
