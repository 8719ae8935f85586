"""The ``mcp:`` target: an MCP server's tools, over stdio or streamable HTTP."""
