"""What a step says in one line (its name, its headline, the change a confirmation asks for), and
text cut only at a word: the readings the page and the stand-in share."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmem.host.chat import ChatMessage, ToolCall
from llmem.host.providers.standin import StandInProvider
from llmem.host.steps import clip, clock, day, describe_change, picture_name, step_headline, step_title

CPA = {
    "success": True,
    "features": [
        {
            "type": "Feature",
            "properties": {"time": "1995-12-12T10:45:08.902Z", "range": 119.544, "distance_unit": "yd"},
        }
    ],
}


def test_text_is_cut_only_at_a_word_with_an_ellipsis() -> None:
    text = "The closest approach between NELSON and COLLINGWOOD was at ten forty-five"
    cut = clip(text, 40)
    assert cut == "The closest approach between NELSON…" and len(cut) <= 40
    assert text.startswith(cut[:-1]) and text[len(cut) - 1] == " "
    assert clip("short", 40) == "short" and clip("a  b\n c", 40) == "a b c"
    one_word = clip("x" * 100, 20)  # no space to cut at: cut inside it, still marked
    assert one_word == "x" * 19 + "…"


def test_times_to_the_second_and_the_day() -> None:
    assert clock("1995-12-12T10:45:08.902Z") == "10:45:09Z" and clock("1995-12-12T10:45:08.4Z") == "10:45:08Z"
    assert day("1995-12-12T10:45:08.902Z") == "12 Dec 1995" and clock("not a time") == "not a time"


def test_a_step_is_named_by_what_ran() -> None:
    assert step_title("debrief-calc:run_tool", {"tool": "closest-approach"}) == "run_tool · closest-approach"
    assert step_title("debrief-state:debrief_render_plot", {"filename": "x.plot.json"}) == "debrief_render_plot"
    assert step_title("debrief-calc:generate_prompt", {"task": "narrate-result"}) == "generate_prompt · narrate-result"
    assert step_title("debrief-calc:run_tool", None) == "run_tool"


def test_a_steps_headline_is_its_figure_or_its_error() -> None:
    assert step_headline(CPA) == "119.5 yd at 10:45:09Z"
    imported = {"features": [{"kind": "track", "name": "NELSON", "point_count": 402}]}
    assert step_headline(imported) == "NELSON (402 fixes)"
    listing = {"open_plots": [], "other_plots": ["a.plot.json"], "rep_files": ["a.rep", "b.rep"]}
    assert step_headline(listing) == "1 plot, 2 REP files"
    assert step_headline({"filename": "x.plot.json", "added_ids": ["a", "b"]}) == "x.plot.json with 2 features"
    picture = {
        "mediaType": "image/png",
        "width": 681,
        "height": 768,
        "time": "1995-12-12T10:45:08.902Z",
        "selectedIds": [],  # a picture's headline is the picture, not the selection it drew
    }
    assert step_headline(picture) == "picture 681×768 px at 10:45:09Z"
    error = {"success": False, "error": {"code": "VALIDATION_FAILED", "message": "'x.rep' is not a file " * 20}}
    line = step_headline(error, failed=True)
    assert line.startswith("'x.rep' is not a file") and line.endswith("…") and len(line) <= 120
    assert step_headline("There is no tool named 'x'.", failed=True) == "There is no tool named 'x'."
    assert step_headline({"result": "Bismarck sunk"}) == "Bismarck sunk" and step_headline(None) == ""
    # a plot's time and selection, read; a narrative-only import; what a new plot holds, by kind
    time = {
        "timeState": {"current": "1995-12-12T10:45:00Z", "start": "1995-12-12T05:00:00Z", "end": "1995-12-12T11:45:00Z"}
    }
    assert step_headline(time) == "at 10:45:00Z (05:00:00Z to 11:45:00Z)"
    assert step_headline({"selectedIds": []}) == "nothing selected"
    assert (
        step_headline({"selectedIds": ["rep-nelson", "rep-collingwood"]}) == "2 selected: rep-nelson, rep-collingwood"
    )
    report = {"source": "log.rep", "fix_count": 0, "narrative_count": 19, "feature_count": 19}
    assert step_headline({"features": [], "report": report}) == "19 narrative entries from log.rep (no fixes)"
    made = {"filename": "x.plot.json", "added_ids": ["a"] * 21}
    assert (
        step_headline(made, kinds={"track": 2, "narrative": 19}) == "x.plot.json with 2 tracks and 19 narrative entries"
    )
    assert step_headline(made, kinds={"track": 1}) == "x.plot.json with 1 track"


@pytest.mark.parametrize(
    ("tool", "arguments", "change"),
    [
        (
            "debrief-state:debrief_apply_command",
            {"filename": "exercise.plot.json", "command": {"command": "deleteFeatures", "payload": ["a", "b"]}},
            "delete 2 features — a, b from exercise.plot.json",
        ),
        (
            "debrief-state:debrief_apply_command",
            {"filename": "x.plot.json", "command": {"command": "addFeatures", "payload": [{}, {}, {}]}},
            "apply addFeatures (3 features) to x.plot.json",
        ),
        (
            "debrief-state:debrief_apply_command",
            {"command": {"command": "addFeatures", "payload": {"ref": "debrief-calc:runs/ab12"}}},
            "apply addFeatures (the features of debrief-calc:runs/ab12) to the open plot",
        ),
        (
            "debrief-state:debrief_set_properties",
            {"filename": "x.plot.json", "ids": ["a"], "properties": {"stroke": "#f00"}},
            'set stroke to "#f00" on a of x.plot.json',
        ),
        (
            "debrief-state:debrief_set_properties",
            {"filename": "x.plot.json", "ids": ["a"], "properties": {"name": "B"}},
            "rename a to B in x.plot.json",
        ),
        ("debrief-state:debrief_undo", {"filename": "x.plot.json"}, "undo the last change to x.plot.json"),
        ("llmem:delete_artifact", {"path": "app.py"}, "delete the stored notes of app.py"),
        ("ships:sink", {"ship": "Bismarck"}, "run sink with ship Bismarck"),
    ],
)
def test_a_confirmation_says_what_will_change(tool: str, arguments: dict[str, object], change: str) -> None:
    assert describe_change(tool, arguments) == change


def test_a_confirmation_names_the_features_it_will_change() -> None:
    known = {"rep-nelson": {"name": "NELSON"}, "rep-collingwood": {"name": "COLLINGWOOD"}}
    tracks = ["rep-nelson", "rep-collingwood"]
    apply = "debrief-state:debrief_apply_command"
    plot = "nelson-collingwood.plot.json"

    def delete(ids: object) -> dict[str, object]:
        return {"filename": plot, "command": {"command": "deleteFeatures", "payload": ids}}

    assert describe_change(apply, delete(["rep-collingwood"]), known, tracks) == (
        f"delete COLLINGWOOD (rep-collingwood) from {plot}"
    )
    assert describe_change(apply, delete({"ids": ["rep-nelson", "rep-collingwood"]}), known, tracks) == (
        f"delete 2 features — NELSON, COLLINGWOOD — all the tracks of the plot from {plot}"
    )
    rename = {"filename": plot, "ids": ["rep-nelson"], "properties": {"name": "NELSON-renamed"}}
    assert describe_change("debrief-state:debrief_set_properties", rename, known, tracks) == (
        f"rename rep-nelson (NELSON) to NELSON-renamed in {plot}"
    )
    # names not known (no reader, or the read failed): the ids
    assert describe_change(apply, delete(["x-1"]), {}, None) == f"delete x-1 from {plot}"


# -- the stand-in's plays, where the tools' answers leave them nothing to go on -----------------

QUESTION = "What was the closest approach between NELSON and COLLINGWOOD?"


Step = tuple[str, dict[str, Any], str, bool, str]


def _after(*steps: Step) -> list[ChatMessage]:
    """The person's question, then each (tool, arguments, result, failed, outcome) as the host keeps it."""
    history = [ChatMessage(role="user", content=QUESTION)]
    for n, (tool, arguments, result, failed, outcome) in enumerate(steps):
        call = ToolCall(f"c{n}", tool, arguments)
        history.append(ChatMessage(role="assistant", tool_calls=[call]))
        history.append(
            ChatMessage(
                role="tool", content=result, tool_call_id=call.id, tool_name=tool, is_error=failed, outcome=outcome
            )
        )
    return history


def test_the_stand_in_says_what_stopped_its_play() -> None:
    standin = StandInProvider()
    text, calls = standin._reply(_after(), [])
    assert text == "" and [c.name for c in calls] == ["debrief-state:debrief_list_plots"]
    empty: Step = ("debrief-state:debrief_list_plots", {}, json.dumps({"open_plots": [], "rep_files": []}), False, "")
    text, calls = standin._reply(_after(empty), [])
    assert calls == [] and text.startswith("The workspace has no REP files to import")
    listing: Step = ("debrief-state:debrief_list_plots", {}, json.dumps({"rep_files": ["a.rep"]}), False, "")
    args: dict[str, Any] = {"tool": "import-rep", "parameters": {"path": "a.rep"}}
    broken = json.dumps({"success": False, "error": {"message": "line 3: no fix"}})
    text, calls = standin._reply(_after(listing, ("debrief-calc:run_tool", args, broken, True, "failed")), [])
    assert calls == [] and text == "`run_tool · import-rep` failed: line 3: no fix. I stopped there."
    one = json.dumps({"features": [{"kind": "track", "id": "rep-a", "name": "A", "ref": "r"}]})
    text, calls = standin._reply(_after(listing, ("debrief-calc:run_tool", args, one, False, "")), [])
    # the question names NELSON and COLLINGWOOD, which the one file does not hold: said plainly,
    # never answered with the ships there are
    assert calls == [] and text.startswith("I found no ship called **NELSON** or **COLLINGWOOD**.")
    assert "The REP files I read (a.rep) hold A." in text


def test_a_pictures_file_name_is_its_plot_and_the_moment_as_its_label_reads() -> None:
    """The moment to the nearest second, as the step's line and the picture's label write it."""
    render = "debrief-state:debrief_render_plot"
    drawn = {"time": "1995-12-12T10:45:08.902Z", "width": 681}
    name = picture_name(render, {"filename": "nelson-collingwood.plot.json"}, json.dumps(drawn))
    assert name == f"nelson-collingwood-1995-12-12T{clock(drawn['time']).replace(':', '')}.png"
    assert name == "nelson-collingwood-1995-12-12T104509Z.png"  # 08.902 is 09, not 08
    # no plot: the tool; the time asked when the answer has none; a second picture numbered; SVG
    assert picture_name(render, {"time": "1995-12-12T11:45:00Z"}, {}, "image/svg+xml", 1) == (
        "debrief_render_plot-1995-12-12T114500Z-2.svg"
    )
    assert picture_name("x:../../etc", {"filename": "../a b.plot.json"}, None) == "a-b.png"  # a plain name


def test_a_steps_warnings_are_counted_on_its_line() -> None:
    track = {"id": "rep-nelson", "kind": "track", "name": "NELSON", "point_count": 402}
    answer = {"success": True, "features": [track], "warnings": ["1 line(s) could not be read", "speed column"]}
    assert step_headline(answer) == f"{step_headline({'features': [track]})} · ⚠ 2 warnings"
    assert step_headline({"success": True, "features": [], "warnings": ["nothing to import"]}) == "⚠ 1 warning"
    assert step_headline({"summary": "ok", "warnings": ["w"]}) == "ok · ⚠ 1 warning"
    assert len(step_headline({"summary": "x" * 500, "warnings": ["w"]}, limit=60)) <= 60
