"""Floor 2 of ``debrief_calc``: features read without trusting them (:mod:`.features`), track
data in any of the four real forms of times, times and their text (:mod:`.times`), time windows
(:mod:`.windows`) and features paged to fit an answer (:mod:`.paging`). It imports only
:mod:`debrief_calc.geo` and :mod:`debrief_calc.errors`."""
