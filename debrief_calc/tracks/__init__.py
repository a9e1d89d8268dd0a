"""Floor 2 of ``debrief_calc``: features read without trusting them (:mod:`.features`), track
data in any of the four real forms of times, time itself (:mod:`.times`: windows, what they cut,
the clock's text; the one place) and features paged to fit an answer (:mod:`.paging`). It imports only
:mod:`debrief_calc.geo` and :mod:`debrief_calc.errors`."""
