"""llmem: the suite's three rooms.

- :mod:`llmem.core`: what every server of the suite shares (store, callback protocol, envelope,
  errors, settings, file primitives, paths, logging, schema, server bootstrap, transports, CLI);
- :mod:`llmem.code`: the code memory, served as ``llmem-mcp``;
- :mod:`llmem.host`: the chat host, ``llmem-host``.

The arrows run one way: ``core`` imports none of the others; ``code``, ``host`` and
``debrief_calc`` import ``core`` (``tests/test_layers.py`` keeps it so).
"""

__version__ = "0.1.0"
