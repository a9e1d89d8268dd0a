"""Lines and elements that hang off a host track: sensor cuts, target solutions, coverage arcs.

:mod:`.records` holds what a line says; :mod:`.hosts` finds the host track by the name the line
gives; :mod:`.sensors`, :mod:`.solutions` and :mod:`.arcs` make the features, the same for REP
lines and ``.dpf`` elements."""
