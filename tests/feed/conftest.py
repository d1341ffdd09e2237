from tests.mcp.conftest import mcp, mcp_server  # noqa: F401  (the MCP tests' server fixtures)
