"""The chat host's parts that know no network: ```tool blocks in streamed text, the system
prompt, the history's token budget, provider function names, the rate limit."""

from __future__ import annotations

import json

import pytest

from llmem.host.chat import ChatMessage, TextDelta, ToolCall, ToolSpec
from llmem.host.prompting import TOOL_BLOCK_RULES, compile_system_prompt, prune_history
from llmem.host.providers import WireNames
from llmem.host.sessions import RateLimiter
from llmem.host.toolblocks import ToolBlockParser

TEXT = 'Let me look.\n```tool\n{"tool": "debrief-calc:run_tool", "arguments": {"tool": "track-stats"}}\n```\nDone ```not a tool``` end.'


def run(parser: ToolBlockParser, pieces: list[str]) -> tuple[str, list[ToolCall]]:
    text, calls = [], []
    for piece in [*pieces, None]:
        out = parser.finish() if piece is None else parser.feed(piece)
        for item in out:
            if isinstance(item, TextDelta):
                text.append(item.text)
            else:
                calls.append(item)
    return "".join(text), calls


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 1000])
def test_a_block_split_anywhere_is_one_call_and_the_text_around_it_streams(size: int) -> None:
    pieces = [TEXT[i : i + size] for i in range(0, len(TEXT), size)]
    text, calls = run(ToolBlockParser(), pieces)
    assert text == "Let me look.\n\nDone ```not a tool``` end."
    assert len(calls) == 1
    assert calls[0].name == "debrief-calc:run_tool" and calls[0].arguments == {"tool": "track-stats"}
    assert not calls[0].native and calls[0].error is None


def test_every_split_point_of_the_fence_itself() -> None:
    for cut in range(len(TEXT)):
        text, calls = run(ToolBlockParser(), [TEXT[:cut], TEXT[cut:]])
        assert len(calls) == 1 and text.startswith("Let me look."), cut


def test_text_streams_without_waiting_for_the_end() -> None:
    parser = ToolBlockParser()
    out = parser.feed("The closest approach was 119.5 yd ``")
    assert [o.text for o in out if isinstance(o, TextDelta)] == ["The closest approach was 119.5 yd "]
    assert [o.text for o in parser.feed("` code")] == ["``` code"]  # not ```tool: let go at once


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ('{"tool": "x", "arguments": {', "not valid JSON"),
        ("[1, 2]", "one JSON object"),
        ('{"arguments": {}}', 'no "tool" name'),
        ('{"tool": "x", "arguments": [1]}', "must be a JSON object"),
    ],
)
def test_a_malformed_block_becomes_a_call_that_says_what_is_wrong(block: str, why: str) -> None:
    _, calls = run(ToolBlockParser(), [f"```tool\n{block}\n```"])
    assert len(calls) == 1 and calls[0].arguments is None and why in (calls[0].error or "")
    assert calls[0].raw == block


def test_other_spellings_of_a_call_are_read() -> None:
    _, calls = run(ToolBlockParser(), ['```tool {"name": "a:b", "args": "{\\"k\\": 1}"}```'])
    assert calls[0].name == "a:b" and calls[0].arguments == {"k": 1}


def test_an_unclosed_block_at_the_end() -> None:
    _, calls = run(ToolBlockParser(), ['```tool\n{"tool": "a:b", "arguments": {"k": 1}}'])
    assert calls[0].arguments == {"k": 1}  # whole JSON, only the fence missing: taken
    _, calls = run(ToolBlockParser(), ['```tool\n{"tool": "a:b", "argu'])
    assert calls[0].arguments is None and "not closed" in (calls[0].error or "")


def test_a_word_that_starts_like_the_fence_is_text() -> None:
    text, calls = run(ToolBlockParser(), ["Use ```tools``` or ```toolkit", " here"])
    assert calls == [] and text == "Use ```tools``` or ```toolkit here"


def test_wire_names_have_no_colons_and_map_back() -> None:
    names = WireNames(["debrief-calc:run_tool", "llmem:get_artifact", "a" * 40 + ":" + "b" * 40])
    for qualified in ["debrief-calc:run_tool", "llmem:get_artifact", "a" * 40 + ":" + "b" * 40]:
        wire = names.wire(qualified)
        assert ":" not in wire and len(wire) <= 64 and names.qualified(wire) == qualified
    assert names.qualified("made_up") == "made_up"


def test_the_system_prompt_has_base_tools_and_every_guide() -> None:
    tools = [
        ToolSpec(
            "calc:run_tool", "Run an analysis.", {"type": "object", "properties": {"tool": {}}, "required": ["tool"]}
        )
    ]
    guides = {"calc": "GUIDE OF CALC", "state": "GUIDE OF STATE"}
    native = compile_system_prompt(tools, guides, native_tools=True)
    text = compile_system_prompt(tools, guides, native_tools=False)
    assert "GUIDE OF CALC" in native and "GUIDE OF STATE" in native and "`calc:run_tool`(tool)" in native
    assert TOOL_BLOCK_RULES not in native
    assert TOOL_BLOCK_RULES in text and json.dumps(tools[0].input_schema, separators=(",", ":")) in text


def test_pruning_keeps_the_newest_within_budget_and_never_an_orphan_result() -> None:
    call = ToolCall("c1", "calc:run_tool", {})
    history = [
        ChatMessage("user", "old question " * 200),
        ChatMessage("assistant", "", tool_calls=[call]),
        ChatMessage("tool", "result " * 400, tool_call_id="c1", tool_name="calc:run_tool"),
        ChatMessage("assistant", "old answer"),
        ChatMessage("user", "new question"),
    ]
    kept = prune_history(history, budget_tokens=100)
    assert [m.content for m in kept] == ["old answer", "new question"]
    assert prune_history(history, budget_tokens=10**6) == history
    # the newest question stays even when it alone is over the budget
    assert prune_history([ChatMessage("user", "x" * 10_000)], budget_tokens=10)[0].content == "x" * 10_000
    # a cut between a call and its result drops the result too
    kept = prune_history([*history[:3], ChatMessage("user", "q")], budget_tokens=520)
    assert kept[0].role != "tool"


def test_the_rate_limit_is_a_bucket() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=3, clock=lambda: now[0])
    assert [limiter.allow() for _ in range(4)] == [True, True, True, False]
    assert limiter.retry_in_s() == pytest.approx(0.5)
    now[0] += 0.5
    assert limiter.allow() and not limiter.allow()


def test_allow_and_deny_lists_of_a_server() -> None:
    from llmem.host.config import parse_config, tool_offered
    from llmem.host.errors import ConfigError

    (spec,) = parse_config(
        {
            "mcpServers": {
                "s": {"command": "x", "includeTools": ["debrief_*", "list_*"], "excludeTools": ["debrief_undo"]}
            }
        }
    )
    assert [spec.offers(t) for t in ("debrief_get_time", "list_tools", "debrief_undo", "run_tool")] == [
        True,
        True,
        False,
        False,
    ]
    assert tool_offered("anything", None, ()) and not tool_offered("delete_artifact", None, ("delete_*",))
    with pytest.raises(ConfigError, match=r"mcpServers\.s\.excludeTools must be a list"):
        parse_config({"mcpServers": {"s": {"command": "x", "excludeTools": "delete_*"}}})


def test_a_secret_cut_anywhere_across_streamed_pieces_never_leaves_whole() -> None:
    from llmem.host.web import _StreamScrubber

    secret = "sk-0123456789"
    text = f"the key is {secret} and {secret[:4]} is not it"
    for cut in range(len(text)):
        for second in range(cut, len(text)):
            scrubber = _StreamScrubber([secret])
            pieces = [scrubber.piece(p) for p in (text[:cut], text[cut:second], text[second:])]
            shown = "".join(pieces) + scrubber.flush()
            assert shown == text.replace(secret, "[redacted]")
            assert all(secret not in p for p in pieces)
