"""The MCP tool server (contract §9): `install_mcp(app, settings)`; tools in `mcp/tools/`."""
