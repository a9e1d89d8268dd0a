"""The core every server of the suite shares: the artifact store, the generate_prompt →
store_llm_result callback protocol, the response envelope, the error hierarchy, settings,
file primitives, workspace paths, logging, tool schemas, the server bootstrap, its transports
(stdio, streamable HTTP) and the command line.

It imports nothing of the code memory (:mod:`llmem.code`), the chat host (:mod:`llmem.host`)
or the Debrief servers (:mod:`debrief_calc`); they all build on it.
"""
