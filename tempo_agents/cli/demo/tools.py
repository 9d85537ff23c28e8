"""The demo's tools: a stable made-up forecast, currency conversion with fixed rates, and writing plan files."""

from __future__ import annotations

import asyncio
import zlib
from pathlib import Path

from pydantic import BaseModel, Field

from tempo_agents import ToolContext
from tempo_agents.tools.builtin.submit_plan import DEFAULT_PLANS_DIR, project_root

__all__ = [
    "ConvertIn",
    "WeatherIn",
    "WeatherOut",
    "WriteFileIn",
    "convert_currency",
    "get_weather",
    "plans_file",
    "write_file",
]


class WeatherIn(BaseModel):
    """The input of ``get_weather``."""

    city: str = Field(description="City name, e.g. Lisbon")


class WeatherOut(BaseModel):
    """The forecast ``get_weather`` returns."""

    city: str
    temperature_c: float
    conditions: str
    humidity_pct: int


_CONDITIONS = ("sunny", "partly cloudy", "overcast", "light rain", "windy", "clear")


async def get_weather(data: WeatherIn, context: ToolContext) -> WeatherOut:
    """A made-up but stable forecast: the same city always gets the same weather."""
    seed = zlib.crc32(data.city.strip().lower().encode())
    await asyncio.sleep(0.05)
    return WeatherOut(
        city=data.city.strip().title(),
        temperature_c=round(8 + (seed % 230) / 10, 1),
        conditions=_CONDITIONS[seed % len(_CONDITIONS)],
        humidity_pct=35 + seed % 50,
    )


class ConvertIn(BaseModel):
    """The input of ``convert_currency``."""

    amount: float = Field(gt=0, description="Amount of money to convert")
    source: str = Field(min_length=3, max_length=3, description="ISO code of the currency to convert from")
    target: str = Field(min_length=3, max_length=3, description="ISO code of the currency to convert to")


_USD_PER_UNIT = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.13, "NOK": 0.094, "SEK": 0.095}


async def convert_currency(data: ConvertIn, context: ToolContext) -> dict[str, object]:
    """Converts with a fixed rate table, streaming its progress to the run."""
    source, target = data.source.upper(), data.target.upper()
    await context.writer.write({"status": "loading rates", "pair": f"{source}/{target}"})
    await asyncio.sleep(0.05)
    if source not in _USD_PER_UNIT or target not in _USD_PER_UNIT:
        known = ", ".join(sorted(_USD_PER_UNIT))
        raise ValueError(f"unknown currency in {source}/{target}; known: {known}")
    rate = _USD_PER_UNIT[source] / _USD_PER_UNIT[target]
    await context.writer.write({"status": "converting", "rate": round(rate, 6)})
    return {
        "amount": data.amount,
        "source": source,
        "target": target,
        "rate": round(rate, 6),
        "converted": round(data.amount * rate, 2),
    }


class WriteFileIn(BaseModel):
    """The input of ``write_file``."""

    path: str = Field(description=f"Where to write, relative to the project root; only inside {DEFAULT_PLANS_DIR}/")
    content: str = Field(description="The whole file content (UTF-8 text)")


_MAX_FILE_BYTES = 64 * 1024


def plans_file(path: str) -> Path:
    """The file ``path`` names if it lies directly inside ``.plans/`` under the project root; else ``ValueError``."""
    base = project_root().resolve()
    folder = base / DEFAULT_PLANS_DIR
    candidate = Path(path)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise ValueError(f"{path}: give a path relative to the project root, without '..'")
    target = (base / candidate).resolve()
    if target.parent != folder.resolve():
        raise ValueError(f"{path}: this tool only writes files directly inside {DEFAULT_PLANS_DIR}/")
    return target


async def write_file(data: WriteFileIn, context: ToolContext) -> dict[str, object]:
    """Writes a file inside ``.plans/`` on the worker (the directory is created when missing)."""
    encoded = data.content.encode()
    if len(encoded) > _MAX_FILE_BYTES:
        raise ValueError(f"{data.path}: {len(encoded)} bytes is more than this tool writes ({_MAX_FILE_BYTES})")
    target = plans_file(data.path)
    await context.writer.write({"status": "writing", "path": data.path, "bytes": len(encoded)})
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(encoded)
    return {"path": data.path, "bytes": len(encoded)}
