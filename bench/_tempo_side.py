"""tempo-agents' side of ``bench/vs_reference.py``: what ``tempo-agents dev --app ...`` runs, in one process.

    python -m bench._tempo_side --app bench.vs_reference_app:app --db-file PATH --port N --api-port M
                                [--server-arg ARG ...]

The embedded dev server (file-backed unless ``--db-file ''``, with the tuning ``tempo-agents dev`` uses, plus
``--server-arg``s), the App's worker and its HTTP API on 127.0.0.1 (no token). Prints ``ready`` once all three
answer; stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tempo_agents.cli._collector import freeze_startup_objects
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.server.serving import ApiServer
from tempo_agents.worker.dev_server import DevServer


async def serve(args: argparse.Namespace) -> None:
    app = configure_app(load_app(args.app), store=args.store)
    server = DevServer(db_filename=args.db_file or None, port=args.port, ui_port=None, extra_args=args.server_arg)
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await connect(app, server.address, "default")
        api = ApiServer(app, host="127.0.0.1", port=args.api_port)
        await api.start()
        try:
            async with app.worker():
                freeze_startup_objects()  # as `tempo-agents dev` does once it serves
                print(f"ready server-pid={server.pid}", flush=True)
                await stop.wait()
        finally:
            await api.stop()
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--db-file", default="")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-port", type=int, required=True)
    parser.add_argument("--server-arg", action="append", default=[])
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
