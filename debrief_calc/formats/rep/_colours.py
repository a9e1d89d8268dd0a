"""The colour a REP symbol names, as legacy Debrief reads it.

A REP symbol such as ``@C`` is a symbol-type character followed by a colour letter. Legacy
Debrief takes the second character, upper-cased, and looks it up in the table of
``ImportReplay.initialiseColours()`` (``debrief/debrief``,
``org.mwc.debrief.legacy/src/Debrief/ReaderWriter/Replay/ImportReplay.java``,
``replayColorFor(String)``); a letter not in the table is drawn red (``java.awt.Color.red``).
The shades are those of ``MWC.GUI.Properties.DebriefColors``
(``org.mwc.cmap.legacy/src/MWC/GUI/Properties/DebriefColors.java`` in the same repository);
``@`` is ``java.awt.Color.white``, ``E`` (``MAGENTA``) ``Color.magenta`` and ``N`` (``GRAY``)
``Color.gray``. Legacy Debrief gives the colour to the track (fixes), to ``;TEXT:`` labels and
to shapes (``;CIRCLE:``, ``;RECT:``, ``;POLY:``) alike; narratives have none.
"""

from __future__ import annotations

from typing import Final

__all__ = ["REPLAY_COLOURS", "UNKNOWN_LETTER_COLOUR", "replay_colour"]

#: ImportReplay.initialiseColours(): colour letter -> DebriefColors shade, as #rrggbb
REPLAY_COLOURS: Final[dict[str, str]] = {
    "@": "#ffffff",  # Color.white
    "A": "#0064bd",  # DebriefColors.BLUE (0, 100, 189)
    "B": "#00800b",  # DebriefColors.GREEN (0, 128, 11)
    "C": "#e01c3e",  # DebriefColors.RED (224, 28, 62)
    "D": "#ffd700",  # DebriefColors.YELLOW (255, 215, 0)
    "E": "#ff00ff",  # DebriefColors.MAGENTA = Color.magenta
    "F": "#ff9600",  # DebriefColors.ORANGE (255, 150, 0)
    "G": "#a100e6",  # DebriefColors.PURPLE (161, 0, 230)
    "H": "#00ffff",  # DebriefColors.CYAN (0, 255, 255)
    "I": "#996600",  # DebriefColors.BROWN (153, 102, 0)
    "J": "#58ff00",  # DebriefColors.LIGHT_GREEN (88, 255, 0)
    "K": "#ff4dff",  # DebriefColors.PINK (255, 77, 255)
    "L": "#e6c814",  # DebriefColors.GOLD (230, 200, 20)
    "M": "#ededed",  # DebriefColors.LIGHT_GRAY (237, 237, 237)
    "N": "#808080",  # DebriefColors.GRAY = Color.gray
    "O": "#c0c0c0",  # DebriefColors.DARK_GRAY (192, 192, 192)
    "P": "#fffffe",  # DebriefColors.WHITE (255, 255, 254)
    "Q": "#1a1a1a",  # DebriefColors.BLACK (26, 26, 26)
    "R": "#a5bfdd",  # DebriefColors.MEDIUM_BLUE (165, 191, 221)
    "S": "#6595cc",  # DebriefColors.DARK_BLUE (101, 149, 204)
}

#: replayColorFor: "if label not found, make it RED" (java.awt.Color.red)
UNKNOWN_LETTER_COLOUR: Final = "#ff0000"


def replay_colour(symbol: str) -> str | None:
    """``#rrggbb`` for a REP symbol (``@C`` -> DebriefColors.RED), or None when the symbol has
    no second character to read a colour from."""
    if len(symbol) < 2:
        return None
    return REPLAY_COLOURS.get(symbol[1].upper(), UNKNOWN_LETTER_COLOUR)
