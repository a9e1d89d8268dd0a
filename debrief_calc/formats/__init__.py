"""Floor 3 of ``debrief_calc``: the files analysts keep. Legacy Debrief's REP (:mod:`.rep`),
``.plot.json`` plots read and written losslessly (:mod:`.plotfile`, :mod:`.plotdoc`,
:mod:`.jsonfmt`, :mod:`.filenames`, the time and viewport features in :mod:`.metadata`), and
result tables as CSV, TSV or Markdown (:mod:`.export`)."""
