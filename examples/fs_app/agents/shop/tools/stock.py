"""The ``stock`` tool: the file's name is the name the model calls it by."""

from pydantic import BaseModel

from tempo_agents import create_tool

SHELVES = {"apples": 12, "pears": 0}


class StockIn(BaseModel):
    item: str


class StockOut(BaseModel):
    item: str
    count: int


def count(data: StockIn) -> StockOut:
    return StockOut(item=data.item, count=SHELVES.get(data.item, 0))


tool = create_tool(
    id="stock-count",
    description="How many of an item are on the shelves",
    input_schema=StockIn,
    output_schema=StockOut,
    execute=count,
)
