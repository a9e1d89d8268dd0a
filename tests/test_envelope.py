"""The envelope's wire form: what every callback-protocol tool answers."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from llmem.core.envelope import Envelope, ErrorInfo, error_envelope
from llmem.core.errors import SuiteError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
maybe_dict = st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=4)
maybe_text = st.none() | st.text(max_size=10)


@given(
    status=st.sampled_from(["success", "error", "prompt_ready"]),
    data=maybe_dict,
    error=st.none()
    | st.builds(
        ErrorInfo, code=st.just("X_Y"), message=st.text(max_size=10), details=maybe_dict.map(lambda d: d or {})
    ),
    prompt=maybe_text,
    tool=maybe_text,
    args=maybe_dict,
    hint=maybe_text,
    success=st.none() | st.booleans(),
)
def test_wire_content_is_the_json_dump_without_the_copy(
    status: Any, data: Any, error: Any, prompt: Any, tool: Any, args: Any, hint: Any, success: Any
) -> None:
    env = Envelope(
        success=success,
        status=status,
        data=data,
        error=error,
        promptForHostLLM=prompt,
        callbackTool=tool,
        callbackArgs=args,
        nextAction=hint,
    )
    wire = env.wire_content()
    assert wire == env.model_dump(mode="json")
    assert list(wire) == list(env.model_dump(mode="json"))  # the same member order too
    if data is not None:
        assert wire["data"] is env.data  # shared, not copied


def test_unset_members_stay_off_the_wire() -> None:
    err = SuiteError("boom", code="BOOM", details={"field": "path"}, next_action="Fix it.")
    assert error_envelope(err).wire_content() == {
        "status": "error",
        "error": {"code": "BOOM", "message": "boom", "details": {"field": "path"}},
        "nextAction": "Fix it.",
    }


def test_with_success_says_false_only_for_errors() -> None:
    assert Envelope(status="prompt_ready").with_success().wire_content() == {"success": True, "status": "prompt_ready"}
    assert Envelope(status="success").with_success().success is True
    err = error_envelope(SuiteError("boom", code="BOOM")).with_success().wire_content()
    assert list(err)[:2] == ["success", "status"] and err["success"] is False
