"""Floor 1 of ``debrief_calc``: geodesy on the WGS84 ellipsoid (:mod:`.geodesy`) and the units
analysts use (:mod:`.units`). It imports nothing of the floors above."""
