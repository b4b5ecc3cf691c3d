"""`parley serve`: the application — Slack's events over HTTP on --port (or over Socket Mode with
SLACK_APP_TOKEN), GET /healthz and GET /metrics, the workers, the timed jobs and recovery. Without any of
Slack's variables it serves health and metrics only, and says so."""

from __future__ import annotations

import argparse
from pathlib import Path

from agent import ConfigError
from bot.assembly import build_brain, build_runtime, open_agent
from bot.config_file import load_config
from bot.serving import serve_http, serve_socket_mode
from bot.settings import Settings
from bot.spans import exported_spans
from bot.store import StorePins, open_store

EXIT_OK = 0
# Each worker records its run; intake, replies, Home, commands and the timed jobs need a few more.
SERVE_EXTRA_CONNECTIONS = 6


def add_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="run the Slack bot (HTTP on --port, or Socket Mode with SLACK_APP_TOKEN)")
    serve.add_argument("--port", type=int, help="HTTP port (default: PORT or 3000)")
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    serve.add_argument("--config", type=Path)
    serve.set_defaults(handler=run)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    loaded = load_config(args.config or settings.config)
    problems = settings.slack_problems() if settings.slack_configured else []
    if problems:
        raise ConfigError("cannot start the Slack bot: " + "; ".join(problems))
    brain = build_brain(settings, loaded.agent)
    db = await open_store(settings.database_url, pool_size=settings.workers + SERVE_EXTRA_CONNECTIONS)
    try:
        async with (
            open_agent(settings, loaded, brain, pins=StorePins(db)) as agent,
            exported_spans(settings.otel_endpoint) as tracer,
        ):
            runtime = build_runtime(
                settings,
                db,
                agent,
                llm_url=settings.llm_base_url,
                review=loaded.review,
                jobs=loaded.jobs,
                ownership=loaded.ownership,
                run_jobs=True,
                tracer=tracer,
                assistant=loaded.assistant,
            )
            port = args.port or settings.port
            if settings.slack_app_token is not None:  # events over the WebSocket; still GET /healthz on the port
                await serve_socket_mode(runtime, settings.slack_app_token.get_secret_value(), host=args.host, port=port)
            else:
                await serve_http(runtime, host=args.host, port=port)
    finally:
        await db.aclose()
    return EXIT_OK
