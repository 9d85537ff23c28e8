"""The ``price`` tool."""

from pydantic import BaseModel

from tempo_agents import create_tool

PRICES = {"apples": 0.5, "pears": 0.7}


class PriceIn(BaseModel):
    item: str


def price(data: PriceIn) -> dict[str, float | str]:
    return {"item": data.item, "eur": PRICES.get(data.item, 0.0)}


price_tool = create_tool(id="price", description="The price of one item, in euros", input_schema=PriceIn, execute=price)
