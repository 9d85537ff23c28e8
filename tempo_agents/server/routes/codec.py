"""The codec server: ``POST /codec/encode`` and ``POST /codec/decode`` in the format the Temporal UI and the
``temporal`` CLI send (``{"payloads": [{"metadata": {name: base64}, "data": base64}]}``, the namespace in the
``X-Namespace`` header), so that people who may call the API read a run's payloads decoded there.

The routes stand behind the API's token check and its ``authorize`` hook like every other route; a request for
another namespace than the App's is refused, as is any request while the App has no encryption keys.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from temporalio.api.common.v1 import Payload, Payloads

from tempo_agents.client.app import App
from tempo_agents.encryption import EncryptionCodec, TamperedError, UnknownKeyError, encryption_codec
from tempo_agents.server.dependencies import AppDep
from tempo_agents.server.errors import ApiError

__all__ = ["CODEC_PREFIX", "router"]

CODEC_PREFIX = "/codec"
"""Where the codec routes are served (outside the API's prefix: it is the endpoint the UI and CLI are given)."""

router = APIRouter(prefix=CODEC_PREFIX, tags=["codec"], include_in_schema=False)

NamespaceHeader = Annotated[str | None, Header(alias="X-Namespace")]
Transform = Callable[[EncryptionCodec], Callable[[Sequence[Payload]], Awaitable[list[Payload]]]]


@router.post("/encode")
async def encode(app: AppDep, request: Request, namespace: NamespaceHeader = None) -> JSONResponse:
    """The payloads sealed under the App's current key."""
    return await _answer(app, request, namespace, lambda codec: codec.encode)


@router.post("/decode")
async def decode(app: AppDep, request: Request, namespace: NamespaceHeader = None) -> JSONResponse:
    """The payloads opened (those not encrypted come back as they are)."""
    return await _answer(app, request, namespace, lambda codec: codec.decode)


async def _answer(app: App, request: Request, namespace: str | None, transform: Transform) -> JSONResponse:
    codec = encryption_codec(app.data_converter)
    if codec is None:
        raise ApiError(404, "this App has no encryption keys, so it has no codec")
    if namespace and namespace != app.client.namespace:
        raise ApiError(400, f"this codec serves namespace '{app.client.namespace}', not '{namespace}'")
    payloads = await _payloads(request)
    try:
        answered = await transform(codec)(list(payloads.payloads))
    except UnknownKeyError as error:
        raise ApiError(422, str(error), keyId=error.key_id) from None
    except TamperedError as error:
        raise ApiError(422, str(error)) from None
    return JSONResponse(MessageToDict(Payloads(payloads=answered)) or {"payloads": []})


async def _payloads(request: Request) -> Payloads:
    try:
        body = await request.json()
        return ParseDict(body, Payloads())
    except (ValueError, ParseError, TypeError, AttributeError):
        raise ApiError(400, 'the body must be {"payloads": [{"metadata": {...}, "data": "<base64>"}]}') from None
