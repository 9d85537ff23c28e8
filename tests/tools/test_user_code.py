"""User code (a tool's function, a hook, a predicate) gets the positional arguments it takes, sync or async, however
often it is called and whatever kind of callable it is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tempo_agents.tools.user_code import call_user_function


async def test_each_function_gets_as_many_arguments_as_it_takes_on_every_call() -> None:
    def none() -> str:
        return "none"

    async def one(a: Any) -> tuple[Any, ...]:
        return (a,)

    def two(a: Any, b: Any, *, flag: bool = True) -> tuple[Any, ...]:
        return (a, b)

    def every(*args: Any) -> tuple[Any, ...]:
        return args

    for _ in range(3):  # the first call works each one out, later calls reuse that
        assert await call_user_function(none, 1, 2, 3) == "none"
        assert await call_user_function(one, 1, 2, 3) == (1,)
        assert await call_user_function(two, 1, 2, 3) == (1, 2)
        assert await call_user_function(two, 1, 2) == (1, 2)
        assert await call_user_function(every, 1, 2, 3) == (1, 2, 3)
        assert await call_user_function(every, 1) == (1,)


@dataclass
class Scaled:
    """A callable object of a class that cannot be hashed (a dataclass that compares by value)."""

    factor: int

    def __call__(self, value: int) -> int:
        return value * self.factor


class Greeter:
    def greet(self, name: str) -> str:
        return f"hello {name}"


async def test_callable_objects_methods_and_builtins_get_the_arguments_they_take() -> None:
    assert await call_user_function(Scaled(3), 2, "more") == 6
    assert await call_user_function(Scaled(5), 2, "more") == 10
    assert await call_user_function(Greeter().greet, "ada", "more") == "hello ada"
    assert await call_user_function(len, "four", "more") == 4
    assert await call_user_function("text".startswith, "te") is True  # no signature to read: it gets every argument
