from tests.engage_delivery.conftest import smtp  # noqa: F401  (the delivery tests' SMTP server)
from tests.mcp.conftest import mcp, mcp_server  # noqa: F401  (the MCP tests' server fixtures)
