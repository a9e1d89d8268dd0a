"""llmem: the shared core of the suite and the code-artifacts MCP server."""

__version__ = "0.1.0"
