"""`parley tools`: every tool the configuration offers (built-in, HTTP and MCP), with its source and whether it
is held, pinned or changed, and each MCP server's state. `parley mcp trust SERVER [TOOL]`: an operator trusts an
MCP server's current definitions again after they changed (their pins become the new ones)."""

from __future__ import annotations

import argparse
from pathlib import Path

from agent import AgentConfig, HttpToolEntry, McpServers, McpServerStatus, Policies, Tool
from bot.assembly import open_tools
from bot.cli.usage import UsageError
from bot.config_file import load_config
from bot.settings import Settings
from bot.store import StorePins, open_store

EXIT_OK = 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    tools = sub.add_parser("tools", help="list the tools the configuration offers, and each MCP server's state")
    tools.add_argument("--config", type=Path)
    tools.set_defaults(handler=run_tools)
    mcp = sub.add_parser("mcp", help="MCP servers")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    trust = mcp_sub.add_parser("trust", help="trust a server's current tool definitions again (after a change)")
    trust.add_argument("server", help="the server's name (its `name:`, else its URL or command)")
    trust.add_argument("tool", nargs="?", help="only this tool (the server's own name for it)")
    trust.add_argument("--config", type=Path)
    mcp.set_defaults(handler=run_trust)


async def run_tools(args: argparse.Namespace, settings: Settings) -> int:
    loaded = load_config(args.config or settings.config)
    db = await open_store(settings.database_url)
    try:
        async with open_tools(settings, loaded, loaded.agent, pins=StorePins(db)) as (built, servers):
            print(render_tools(built, servers, loaded.agent))
    finally:
        await db.aclose()
    return EXIT_OK


async def run_trust(args: argparse.Namespace, settings: Settings) -> int:
    loaded = load_config(args.config or settings.config)
    db = await open_store(settings.database_url)
    pins = StorePins(db, actor=settings.cli_user())
    try:
        async with open_tools(settings, loaded, loaded.agent, pins=pins) as (_, servers):
            server = servers.named(args.server)
            if server is None:
                known = ", ".join(s.name for s in servers.servers) or "none"
                raise UsageError(f"no MCP server is named {args.server!r} (servers: {known})")
            status = server.status()
            if not server.digests:
                raise UsageError(f"{server.name} is not connected ({status.problem}): its definitions cannot be read")
            if args.tool is not None and args.tool not in server.digests:
                raise UsageError(f"{server.name} lists no tool named {args.tool!r}")
            chosen = [args.tool] if args.tool is not None else sorted(server.digests)
            await pins.trust(server.name, {tool: server.digests[tool] for tool in chosen})
            was_changed = set(status.changed)
            for tool in chosen:
                print(
                    f"{server.name} {tool}: trusted" + (" (its definition had changed)" if tool in was_changed else "")
                )
    finally:
        await db.aclose()
    return EXIT_OK


def render_tools(built: list[Tool], servers: McpServers, config: AgentConfig) -> str:
    policies = Policies(config.policies)
    http = {entry.name for entry in config.tools if isinstance(entry, HttpToolEntry)}
    rows: list[tuple[str, str, str]] = []
    for tool in built:
        source = "http" if tool.spec.name in http else "builtin"
        held = policies.hold_reason(tool.spec.name, {}) is not None
        rows.append((tool.spec.name, source, "held" if held else ""))
    for status in servers.status():
        for entry in status.tools:
            if entry.changed:
                state = f"CHANGED: not offered until `parley mcp trust {status.server} {entry.server_tool}`"
            elif not entry.offered:
                state = f"not offered: {entry.why_not}"
            else:
                held = (
                    entry.held
                    if entry.name not in {p.tool for p in config.policies}
                    else (policies.hold_reason(entry.name, {}) is not None)
                )
                state = "pinned" + (", held (destructive)" if held else "")
            rows.append((entry.name, f"mcp {status.server}", state))
    width = max((len(name) for name, _, _ in rows), default=4)
    source_width = max((len(source) for _, source, _ in rows), default=6)
    lines = [f"{name:<{width}}  {source:<{source_width}}  {state}".rstrip() for name, source, state in rows]
    lines += ["", "MCP servers:"] + [_server_line(status) for status in servers.status()] if servers.servers else []
    return "\n".join(lines) if lines else "no tools are configured"


def _server_line(status: McpServerStatus) -> str:
    offered = sum(1 for tool in status.tools if tool.offered)
    line = f"  {status.server} ({status.transport}): {status.state.value}, {offered} tools offered"
    if status.changed:
        line += f", changed: {', '.join(status.changed)}"
    return line + (f" — {status.problem}" if status.problem and status.state.value != "up" else "")
