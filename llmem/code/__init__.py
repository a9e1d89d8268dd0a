"""The code memory served as ``llmem-mcp``: outlines of source files (``outline/``, ``parsing``,
``walk``), LLM-written notes about them (``notes``, ``tasks``), search (``search``) and the
operations the server wires to tools (``artifacts``, ``server``), on the suite's core
(:mod:`llmem.core`)."""
