"""Floor 5 of ``debrief_calc``: the state of plots. What the two servers share through the
artifact store (:mod:`.plotstate`: selections, stored results, references), the DebriefCommand
checked and applied (:mod:`.cmdcheck`, :mod:`.commands`), the undo history (:mod:`.history`)
and the picture of a plot (:mod:`.render`)."""
