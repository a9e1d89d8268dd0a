"""``bearing-residuals``: a sensor's cuts against a candidate target track, legacy Debrief's stacked dots.

Per cut: the measured bearing, the bearing from the cut's origin to the target at that time (the
target interpolated along the geodesic between its fixes; the geodesic azimuth on WGS84) and the
error, measured minus calculated, wrapped to ±180°. Then the mean and RMS, and what the dots say:
over each ownship leg (``track-legs`` on the host track, when it is given) a straight line through
the errors against time, a **trend** where its slope is significant against the scatter (a t test at
1 %) and moves the error by ``min_trend_deg`` or more over the leg (course or speed off); a **step**
between two legs where the mean error jumps as much, significantly (range off). Cuts outside the
target's span have no residual and are counted and named. With an ambiguous array each cut says
which of its two bearings fits; with frequencies, the Doppler residuals: ``f = f0 (C + OSL) / (C −
TSL)``, C = 2951 kn (legacy Debrief's speed of sound), OSL ownship's speed along the line of sight
towards the target, TSL the target's towards ownship, f0 given or fitted by least squares.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    motion_at,
    num,
    num_list,
    result_feature,
    robust_sd,
    source_ref,
    wrap180,
)
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.analysis.sensor_cuts import CUTS_PARAM, OWNSHIP_PARAM, SENSOR_PARAM, Cuts, roles_of, select_cuts
from debrief_calc.errors import InvalidContext
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso, iso_many, parse_iso

__all__ = ["SOUND_KN", "SPEC", "residuals_of"]

#: the speed of sound legacy Debrief's Doppler takes, knots
SOUND_KN: Final = 2951.0
#: fewest cuts with a residual over which a trend is read
_TREND_CUTS: Final = 4
#: a step between legs is significant beyond this many standard errors
_STEP_Z: Final = 3.0
#: an RMS error beyond this (degrees) is never called a fit, whatever its trends: far beyond any
#: bearing sensor's noise, it says the candidate (or the side of an ambiguous array) is wrong
FIT_RMS_DEG: Final = 10.0


def _t_critical(dof: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.995, dof))


def _stretch(
    t: FloatArray, e: FloatArray, numbers: np.ndarray[Any, Any], min_deg: float | None, unit: str = "deg"
) -> dict[str, Any]:
    """A straight line through the errors ``e`` against ``t``: slope (per minute), change over the
    stretch, its t statistic and whether it trends (significantly, and by ``min_deg`` or more; None:
    by at least the errors' own scatter about the line). ``unit`` names the keys' unit."""
    ok = np.isfinite(e)
    t, e, numbers = t[ok], e[ok], numbers[ok]
    out: dict[str, Any] = {
        "cuts": [int(numbers[0]), int(numbers[-1])] if numbers.size else None,
        "cut_count": int(e.size),
    }
    if e.size:
        out["mean_error"] = num(float(np.mean(e)), 3)
    if e.size < _TREND_CUTS or np.ptp(t) <= 0:
        out["trend"] = False
        out["note"] = f"fewer than {_TREND_CUTS} cuts: no trend read"
        return out
    x = (t - t.mean()) / 60.0
    slope = float(np.sum(x * (e - e.mean())) / np.sum(x * x))
    res = e - e.mean() - slope * x
    dof = e.size - 2
    se = math.sqrt(float(res @ res) / dof / float(np.sum(x * x)))
    change = slope * float(np.ptp(t)) / 60.0
    t_stat = abs(slope) / se if se > 0 else math.inf
    scatter = math.sqrt(float(res @ res) / dof)
    trend = bool(t_stat > _t_critical(dof) and abs(change) >= (scatter if min_deg is None else min_deg))
    out[f"slope_{unit}_per_min"] = num(slope, 4)
    out[f"change_{unit}"] = num(change, 3)
    out[f"scatter_{unit}"] = num(scatter, 3)
    out.update(t_stat=num(t_stat, 2) if math.isfinite(t_stat) else None, trend=trend)
    return out


def _trends(
    cuts: Cuts,
    error: FloatArray,
    legs: list[dict[str, Any]],
    manoeuvres: list[dict[str, Any]],
    min_deg: float | None,
    unit: str = "deg",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stretches (ownship legs, or all the cuts) with their trends, and the steps between legs."""
    spans: list[tuple[float, float, dict[str, Any] | None]] = [
        (parse_iso(leg["start"]), parse_iso(leg["end"]), leg) for leg in legs
    ]
    if not spans:
        spans = [(float(cuts.t[0]), float(cuts.t[-1]), None)]
    stretches = []
    for start, end, leg in spans:
        inside = (cuts.t >= start) & (cuts.t <= end)
        if not inside.any():
            continue
        item: dict[str, Any] = {"start": iso(start), "end": iso(end)}
        if leg is not None:
            item.update(ownship_leg=leg["leg"], ownship_course=leg["course"])
        item.update(_stretch(cuts.t[inside], error[inside], cuts.number[inside], min_deg, unit))
        stretches.append(item)
    steps = []
    for m in manoeuvres:
        pair = m.get("between_legs")
        if not pair:
            continue
        a, b = legs[pair[0] - 1], legs[pair[1] - 1]
        ea = error[(cuts.t >= parse_iso(a["start"])) & (cuts.t <= parse_iso(a["end"]))]
        eb = error[(cuts.t >= parse_iso(b["start"])) & (cuts.t <= parse_iso(b["end"]))]
        ea, eb = ea[np.isfinite(ea)], eb[np.isfinite(eb)]
        if ea.size < 2 or eb.size < 2:
            continue
        step = float(eb.mean() - ea.mean())
        se = math.sqrt(float(ea.var(ddof=1)) / ea.size + float(eb.var(ddof=1)) / eb.size)
        z = abs(step) / se if se > 0 else math.inf
        steps.append(
            {
                "at": m["start"],
                "between_ownship_legs": pair,
                "step_deg": num(step, 3),
                "z": num(z, 2) if math.isfinite(z) else None,
                "step": bool(z > _STEP_Z and abs(step) >= (min_deg or 0.0)),
            }
        )
    return stretches, steps


def _outlier_text(outliers: dict[str, Any] | None) -> str:
    if not outliers:
        return ""
    named = ", ".join(f"{o['cut']} ({o['error']:+.1f}°)" for o in outliers["cuts"][:10])
    more = f" and {outliers['count'] - 10} more" if outliers["count"] > 10 else ""
    return f", without the {outliers['count']} outlier cut(s) {named}{more} ({outliers['rms_with']:.2f}° RMS with them)"


def _verdict(
    clean: tuple[float, float, int] | None,
    outliers: dict[str, Any] | None,
    stretches: list[dict[str, Any]],
    steps: list[dict[str, Any]],
    min_deg: float,
) -> str:
    """What the dots say, read over the cuts that are not outliers (``clean``: their mean, RMS and
    count), the outliers named."""
    if clean is None:
        return "no cut falls within the target's span: nothing to compare"
    mean, rms, count = clean
    bad = [s for s in stretches if s.get("trend")]
    jumps = [s for s in steps if s["step"]]
    if rms > FIT_RMS_DEG:
        return (
            f"does not fit: errors {mean:+.2f}° mean, {rms:.2f}° RMS over {count} cuts{_outlier_text(outliers)}, "
            f"beyond {FIT_RMS_DEG:g}° RMS: the candidate is not where these bearings point"
        )
    if not bad and not jumps:
        return (
            f"fits: errors {mean:+.2f}° mean, {rms:.2f}° RMS over {count} cuts{_outlier_text(outliers)}; no trend or "
            f"step of {min_deg:g}° or more: the dots lie flat about zero"
        )
    parts = []
    for s in bad:
        where = (
            f"ownship leg {s['ownship_leg']} ({s['start'][11:16]}–{s['end'][11:16]})"
            if "ownship_leg" in s
            else "the cuts"
        )
        parts.append(f"the error trends {s['change_deg']:+.1f}° over {where}")
    for s in jumps:
        parts.append(f"it steps {s['step_deg']:+.1f}° at the ownship turn at {s['at'][11:16]}")
    text = "off: " + "; ".join(parts)
    hints = []
    if bad:
        hints.append("a slope means the candidate's course or speed is off")
    if jumps:
        hints.append("a step at an ownship turn means its range is off")
    return f"{text} ({' and '.join(hints)}); errors {mean:+.2f}° mean, {rms:.2f}° RMS over {count} cuts{_outlier_text(outliers)}"


def _side_text(ambiguity: dict[str, Any] | None, clean: tuple[float, float, int] | None) -> str:
    """For an ambiguous array, which of its two bearings the verdict reads, and how the other fares."""
    if ambiguity is None or clean is None or ambiguity["cuts_with_both"] == 0:
        return ""
    side = ambiguity["fits_overall"]
    other = "bearing" if side == "ambiguous" else "ambiguous"
    name = {"bearing": "recorded", "ambiguous": "ambiguous"}
    rms_side, rms_other = ambiguity[f"rms_{side}"], ambiguity[f"rms_{other}"]
    n = ambiguity["cuts_with_both"]
    if rms_side > FIT_RMS_DEG:
        return (
            f"neither side of the ambiguous array fits (the {name[side]} bearings {rms_side:.2f}° RMS, the "
            f"{name[other]} {rms_other:.2f}° over {n} cuts); "
        )
    if rms_other <= FIT_RMS_DEG:
        return (
            f"both sides of the ambiguous array fit ({name[side]} {rms_side:.2f}°, {name[other]} {rms_other:.2f}° "
            f"RMS over {n} cuts): the side is not settled against this candidate (an ownship turn settles it); "
            f"read for the {name[side]} bearings: "
        )
    if side == "bearing":  # the usual case: said after the verdict (see residuals_of)
        return ""
    return (
        f"the ambiguous bearings fit: {rms_side:.2f}° RMS over {n} cuts; the recorded bearings do not "
        f"({rms_other:.1f}°): the contact is on the side of its ambiguous bearings; "
    )


def _outliers(cuts: Cuts, error: FloatArray, sigma: float) -> tuple[np.ndarray[Any, Any], dict[str, Any] | None]:
    """The cuts whose error is beyond ``sigma`` robust standard deviations (tma-solve's rule), and
    their record (None when there are none)."""
    from debrief_calc.analysis.tma_fit import SD_FLOOR_DEG

    usable = np.isfinite(error)
    if sigma <= 0 or not usable.any():
        return np.zeros(error.size, dtype=bool), None
    scale = robust_sd(error, SD_FLOOR_DEG)
    far = usable & (np.abs(np.where(usable, error, 0.0)) > sigma * scale)
    if not far.any():
        return far, None
    e = error[usable]
    idx = np.flatnonzero(far)
    return far, {
        "count": int(idx.size),
        "cuts": [
            {"cut": int(cuts.number[k]), "time": iso(float(cuts.t[k])), "error": num(float(error[k]), 2)}
            for k in idx[:100]
        ],
        "robust_sd": num(scale, 3),
        "outlier_sigma": sigma,
        "rms_with": math.sqrt(float(np.mean(e * e))),
        "note": (
            f"errors beyond {sigma:g} robust SDs ({sigma * scale:.2f}°), as tma-solve names them: left out of the "
            "clean figures, the trends, the steps and the verdict"
        ),
    }


def _frequency_verdict(out: dict[str, Any], stretches: list[dict[str, Any]]) -> str:
    bad = [s for s in stretches if s.get("trend")]
    f0 = f"f0 {out['f0_hz']:.3f}" + (f" ± {out['f0_sd_hz']:.3f}" if out.get("f0_sd_hz") is not None else "")
    offset = out.get("offset")
    if not bad and offset and offset["steady"]:
        return (
            f"off: a steady offset of {offset['mean_error_hz']:+.3f} Hz ({offset['z']:.1f} of its SD {offset['sd_hz']:.3f} "
            f"Hz, the candidate's own uncertainty included) about the given {f0} Hz: the candidate's speed along the "
            f"line of sight is off by about {offset['implied_los_speed_error_kn']:+.1f} kn, or f0 is not the source's"
        )
    if not bad:
        return (
            f"fit: {out['rms_error_hz']:.3f} Hz RMS about {f0} Hz ({out['f0_source']}), no trend over any ownship leg"
            + (", no steady offset beyond the candidate's uncertainty" if offset else "")
        )
    where = "; ".join(
        f"{s['change_hz']:+.2f} Hz over "
        + (
            f"ownship leg {s['ownship_leg']} ({s['start'][11:16]}–{s['end'][11:16]})"
            if "ownship_leg" in s
            else "the cuts"
        )
        for s in bad
    )
    return (
        f"off: the frequency error trends {where} ({out['rms_error_hz']:.3f} Hz RMS about f0 {out['f0_hz']:.3f} Hz): "
        "the candidate's speed (or course) along the line of sight is off, a drift the bearings may not show"
    )


def _doppler(
    cuts: Cuts,
    ok: np.ndarray[Any, Any],
    own: TrackData | None,
    target: TrackData,
    az1: FloatArray,
    az2: FloatArray,
    f0_given: float | None,
    legs: list[dict[str, Any]],
    motion_sd: tuple[float, float] | None = None,
) -> tuple[dict[str, Any], dict[str, list[float | None]]] | None:
    """The frequency residuals with their trends over ownship's ``legs`` (a trend: significant at
    1 % and as large as the errors' own scatter), or None when no cut has a frequency."""
    has = ok & np.isfinite(cuts.frequency)
    if not has.any():
        return None
    if own is None:
        return {"note": "the cuts have frequencies: give the host track too for their Doppler residuals"}, {}
    own_speed, own_course = motion_at(Legs(own), cuts.t)
    tgt_speed, tgt_course = motion_at(Legs(target), cuts.t)
    osl = own_speed / KNOT_MPS * np.cos(np.radians(np.nan_to_num(own_course) - az1))

    def gain_of(knots_more: float, degrees_more: float) -> FloatArray:
        tsl = -(tgt_speed / KNOT_MPS + knots_more) * np.cos(np.radians(np.nan_to_num(tgt_course) + degrees_more - az2))
        return np.asarray((SOUND_KN + osl) / (SOUND_KN - tsl), dtype=float)

    gain = gain_of(0.0, 0.0)
    use = has & np.isfinite(gain)
    f = cuts.frequency
    fu = f[use]

    def fitted(g: FloatArray) -> float:
        return float(fu @ g[use] / (g[use] @ g[use]))

    out: dict[str, Any] = {"speed_of_sound_kn": SOUND_KN, "cut_count": int(use.sum())}
    if f0_given is not None:
        f0, source = f0_given, "given"
    elif cuts.base_frequency is not None:
        f0, source = cuts.base_frequency, "the sensor's baseFrequency"
    else:
        f0, source = fitted(gain), "estimated by least squares"
    # the candidate's own uncertainty (a tma-solve solution's course and speed SDs) moves f0 too
    base = fitted(gain)
    motion_f0_sd = (
        math.hypot(fitted(gain_of(motion_sd[0], 0.0)) - base, fitted(gain_of(0.0, motion_sd[1])) - base)
        if motion_sd is not None
        else None
    )
    calc = np.where(use, f0 * gain, np.nan)
    err = np.where(use, f - calc, np.nan)
    e = err[use]
    scatter = float(np.std(e, ddof=1)) if e.size > 1 else math.nan
    per_knot = f0 / SOUND_KN
    out.update(
        f0_hz=num(f0, 4),
        f0_source=source,
        mean_error_hz=num(float(np.mean(e)), 4),
        rms_error_hz=num(math.sqrt(float(np.mean(e * e))), 4),
    )
    noise_sd = scatter / math.sqrt(e.size) if e.size > 1 else math.nan
    total_sd = math.hypot(noise_sd, motion_f0_sd or 0.0)
    if source == "estimated by least squares" and e.size > 1:
        out["f0_sd_hz"] = num(total_sd, 4)
        out["f0_sd_noise_hz"] = num(noise_sd, 4)
    motion_note = (
        f"the candidate's course and speed SDs ({motion_sd[1]:g}°, {motion_sd[0]:g} kn) move f0 by "
        f"{motion_f0_sd:.4f} Hz (1 SD), included"
        if motion_sd is not None and motion_f0_sd is not None
        else "the candidate's motion is taken as exact (it carries no SDs): each knot of error in its speed along the "
        f"line of sight moves f0 (or a steady offset) by about {per_knot:.3f} Hz"
    )
    out["f0_sd_note"] = motion_note
    if source != "estimated by least squares" and e.size > 1:
        z = abs(float(np.mean(e))) / total_sd if total_sd > 0 else math.inf
        out["offset"] = {
            "mean_error_hz": num(float(np.mean(e)), 4),
            "sd_hz": num(total_sd, 4),
            "z": num(z, 2) if math.isfinite(z) else None,
            "steady": bool(z > _STEP_Z),
            "implied_los_speed_error_kn": num(float(np.mean(e)) / per_knot, 2),
            "note": f"the mean error against its SD (the cuts' scatter over √n and {motion_note}); beyond "
            f"{_STEP_Z:g} SDs a steady offset: with f0 known, the target's speed along the line of sight is off",
        }
    stretches, _ = _trends(cuts, err, legs, [], None, "hz")
    out["stretches"] = stretches
    out["verdict"] = _frequency_verdict(out, stretches)
    columns = {
        "frequency": num_list(np.where(has, f, np.nan), 4),
        "frequency_calculated": num_list(calc, 4),
        "frequency_error": num_list(err, 4),
    }
    return out, columns


def motion_sd_of(target_feature: Any) -> tuple[float, float] | None:
    """A tma-solve solution's largest (speed SD kn, course SD deg) over its legs; None for any other
    track (truth, a track typed in), whose motion is taken as exact."""
    from debrief_calc.tracks._feature_parts import properties_of

    legs = (properties_of(target_feature).get("solution") or {}).get("target_legs") or []
    speeds = [float(leg["speed_sd_kn"]) for leg in legs if isinstance(leg, dict) and leg.get("speed_sd_kn") is not None]
    courses = [float(leg["course_sd"]) for leg in legs if isinstance(leg, dict) and leg.get("course_sd") is not None]
    return (max(speeds), max(courses)) if speeds and courses else None


def residuals_of(
    cuts: Cuts,
    target: TrackData,
    own: TrackData | None,
    own_feature: Any,
    params: dict[str, Any] | Any,
    motion_sd: tuple[float, float] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The answer's properties for the cuts against the target, and the warnings."""
    from debrief_calc.analysis.tma_observe import ownship_of

    unit = params["distance_unit"]
    min_deg = float(params["min_trend_deg"])
    lat, lon = geodesy.interpolate_track(target.t, target.lat, target.lon, cuts.t)
    ok = np.isfinite(lat)
    n = len(cuts)
    calc, az2, dist = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    if ok.any():
        metres, a1, a2 = geodesy.inverse(cuts.lat[ok], cuts.lon[ok], lat[ok], lon[ok])
        calc[ok], az2[ok], dist[ok] = a1, a2, metres
    error = wrap180(cuts.bearing - calc)
    error[~np.isfinite(cuts.bearing)] = np.nan
    recorded_error = error
    amb = np.isfinite(cuts.ambiguous)
    ambiguity: dict[str, Any] | None = None
    amb_error = np.full(n, np.nan)
    if amb.any():
        amb_error = wrap180(cuts.ambiguous - calc)
        ambiguity = _which_fits(cuts, error, amb_error, amb & ok)
        if ambiguity["fits_overall"] == "ambiguous":  # every figure and the verdict read the side that fits
            error = np.where(amb, amb_error, error)
    usable = np.isfinite(error)
    e = error[usable]
    mean = float(np.mean(e)) if e.size else None
    rms = math.sqrt(float(np.mean(e * e))) if e.size else None
    warnings: list[str] = []
    props: dict[str, Any] = {
        "sensor_id": cuts.sensor_id,
        "sensor_name": cuts.name,
        "target_id": target.id,
        "target_name": target.name,
        "cut_count": n,
        "residual_count": int(usable.sum()),
        "mean_error": num(mean, 4),
        "rms_error": num(rms, 4),
        "error_unit": "deg, measured minus calculated",
    }
    if ambiguity is not None:
        props["residual_side"] = ambiguity["fits_overall"]
    if e.size:
        worst = int(np.flatnonzero(usable)[np.argmax(np.abs(e))])
        props["max_abs_error"] = {
            "error": num(float(error[worst]), 3),
            "cut": int(cuts.number[worst]),
            "time": iso(float(cuts.t[worst])),
        }
    outside = np.flatnonzero(~ok)
    if outside.size:
        numbers = [int(cuts.number[k]) for k in outside]
        props["outside_target"] = {
            "count": int(outside.size),
            "cuts": numbers[:100],
            "note": f"the target track runs {iso(float(target.t[0]))} to {iso(float(target.t[-1]))}: no residual for these cuts",
        }
        warnings.append(
            f"{outside.size} cut(s) fall outside the target track's span: no residual for them (outside_target)"
        )
    legs: list[dict[str, Any]] = []
    manoeuvres: list[dict[str, Any]] = []
    if own is not None:
        motion = ownship_of(own_feature, float(cuts.t[0]), float(cuts.t[-1]))
        legs, manoeuvres = motion.legs, motion.manoeuvres
        props["ownship_id"] = own.id
        props["ownship_legs"] = [{k: leg[k] for k in ("leg", "start", "end", "course", "speed_kn")} for leg in legs]
        props["ownship_turns"] = [
            {k: m.get(k) for k in ("start", "end", "course_from", "course_to", "turn", "turn_deg")} for m in manoeuvres
        ]
    else:
        props["ownship_note"] = "no host track given: the trends are read over all the cuts, without ownship's legs"
    far, outliers = _outliers(cuts, error, float(params["outlier_sigma"]))
    clean_error = np.where(far, np.nan, error)
    clean = clean_error[np.isfinite(clean_error)]
    if outliers is not None:
        props["mean_error_clean"] = num(float(np.mean(clean)), 4)
        props["rms_error_clean"] = num(math.sqrt(float(np.mean(clean * clean))), 4)
        props["outliers"] = {**outliers, "rms_with": num(outliers["rms_with"], 4)}
    stretches, steps = _trends(cuts, clean_error, legs, manoeuvres, min_deg)
    props["stretches"] = stretches
    props["steps"] = steps
    props["min_trend_deg"] = min_deg
    figures = (float(np.mean(clean)), math.sqrt(float(np.mean(clean * clean))), int(clean.size)) if clean.size else None
    props["verdict"] = _side_text(ambiguity, figures) + _verdict(figures, outliers, stretches, steps, min_deg)
    if ambiguity is not None and ambiguity["fits_overall"] == "bearing" and ambiguity["rms_ambiguous"] > FIT_RMS_DEG:
        props["verdict"] += (
            f"; the recorded bearings are the side that fits (the ambiguous {ambiguity['rms_ambiguous']:.1f}° RMS)"
        )
    d = min(distance_decimals(unit), 4)
    series: dict[str, Any] = {
        "time": iso_many(cuts.t),
        "cut": cuts.number.tolist(),
        "measured": num_list(cuts.bearing, 2),
        "calculated": num_list(calc, 3),
        "error": num_list(recorded_error, 3),
        "range": num_list(dist / METRES_PER_UNIT[unit], d),
    }
    if ambiguity is not None:
        series["ambiguous"] = num_list(cuts.ambiguous, 2)
        series["ambiguous_error"] = num_list(amb_error, 3)
        props["ambiguity"] = ambiguity
    if own is not None:
        _, course = motion_at(Legs(own), cuts.t)
        series["ownship_course"] = num_list(course, 1)
    doppler = _doppler(cuts, ok, own, target, calc, az2, params["base_frequency"], legs, motion_sd)
    if doppler is not None:
        props["frequency"], columns = doppler
        series.update(columns)
        if "verdict" in props["frequency"]:
            props["verdict"] += "; frequencies " + props["frequency"]["verdict"]
    props["distance_unit"] = unit
    props["series"] = series
    return props, warnings


def _which_fits(cuts: Cuts, error: FloatArray, amb_error: FloatArray, both: np.ndarray[Any, Any]) -> dict[str, Any]:
    """Per cut and overall, which of an ambiguous array's two bearings fits the target."""
    a, b = np.abs(error), np.abs(amb_error)
    took_amb = both & (b < a)
    took_brg = both & ~(b < a)
    best = np.where(took_amb, amb_error, error)[both]
    rms_brg = math.sqrt(float(np.nanmean(error[both] ** 2))) if both.any() else math.inf
    rms_amb = math.sqrt(float(np.nanmean(amb_error[both] ** 2))) if both.any() else math.inf
    overall = "ambiguous" if rms_amb < rms_brg else "bearing"
    return {
        "cuts_with_both": int(both.sum()),
        "bearing_fits": int(took_brg.sum()),
        "ambiguous_fits": int(took_amb.sum()),
        "ambiguous_fit_cuts": [int(cuts.number[k]) for k in np.flatnonzero(took_amb)[:100]],
        "fits_overall": overall,
        "rms_bearing": num(rms_brg, 3) if both.any() else None,
        "rms_ambiguous": num(rms_amb, 3) if both.any() else None,
        "rms_best_of_two": num(math.sqrt(float(np.mean(best * best))), 3) if both.any() else None,
        "note": (
            "fits_overall: the field (bearing or ambiguous) with the smaller RMS over the cuts with both; mean_error, "
            "rms_error, the trends and the verdict read that side (residual_side). Per cut, the bearing nearer the "
            "target's (series: error, ambiguous_error)"
        ),
    }


def handle(inp: ToolInput) -> ToolOutput:
    p = inp.parameters
    roles = roles_of(inp.features, p["sensor"], p["ownship"])
    cuts = select_cuts(roles.cuts, p["cuts"])
    candidates = [item for item in roles.others if p["target"] is None or item[0].id == p["target"]]
    if len(candidates) != 1:
        named = [t.id for t, _, _ in roles.others]
        if p["target"] is not None:
            message = f"parameter 'target': {p['target']!r} is not among the tracks given ({', '.join(map(repr, named)) or 'none'} besides the host)"
        elif not candidates:
            host = (
                f" (the only track given, {roles.ownship.id!r}, is the sensor's host)"
                if roles.ownship is not None
                else ""
            )
            message = f"no target track among the features{host}: give the candidate target (the truth, a tma-solve solution, a track typed in)"
        else:
            message = f"{len(candidates)} candidate target tracks ({', '.join(map(repr, named))}): name one with parameters.target"
        raise InvalidContext(
            message,
            details={"field": "target" if p["target"] else "features", "rule": "one target track", "tracks": named},
            next_action="pass the sensor, one target track (and the host), or set parameters.target",
        )
    target, target_feature, target_index = candidates[0]
    props, warnings = residuals_of(cuts, target, roles.ownship, roles.ownship_feature, p, motion_sd_of(target_feature))
    if roles.ownship is None:
        warnings.append(
            "no host track given"
            + (f" (the sensor's host is {roles.cuts.host!r})" if roles.cuts.host else "")
            + ": no ownship legs, trends over all the cuts"
        )
    sources = [source_ref(roles.sensor, roles.sensor_index), source_ref(target_feature, target_index)]
    if roles.ownship_feature is not None:
        sources.append(source_ref(roles.ownship_feature, roles.ownship_index))
    name = f"Bearing residuals {cuts.name} against {target.name or target.id}"
    return ToolOutput(features=[result_feature(name, None, props)], feature_sources=[sources], warnings=warnings)


SPEC = ToolSpec(
    name="bearing-residuals",
    description=(
        "Legacy Debrief's stacked dots: a sensor's cuts against a candidate target track (truth, a tma-solve "
        "solution, any track), with the host track for ownship's legs. series per cut (measured, calculated, error = "
        "measured - calculated in ±180°, range; ambiguous_error; frequency_error); mean_error, rms_error; stretches "
        "per ownship leg (trend: course or speed off), steps at ownship turns (range off), verdict; outside_target; "
        "ambiguity; frequency (Doppler, f0 given or fitted). render_series draws it."
    ),
    version="1.0.0",
    input_kinds=("sensor", "track"),
    output_kind="analysis-result",
    context_type="multi",
    also_accepts=("single",),  # a sensor alone: the handler says which track to add
    parameters=(
        CUTS_PARAM,
        Parameter(
            "target", "string", "Id of the candidate target track when several tracks besides the host are given."
        ),
        Parameter(
            "min_trend_deg",
            "number",
            "Least change of the error over a stretch (or step between legs) that counts as a trend (degrees).",
            default=0.5,
            unit="deg",
            minimum=0,
        ),
        Parameter(
            "outlier_sigma",
            "number",
            "An error beyond this many robust SDs is an outlier: named, left out of the verdict; 0: none.",
            default=4.0,
            minimum=0,
            maximum=100,
        ),
        Parameter(
            "base_frequency",
            "number",
            "f0 (Hz) for the frequency residuals; default the sensor's baseFrequency, else fitted.",
            unit="Hz",
            minimum=0,
            exclusive_minimum=True,
        ),
        SENSOR_PARAM,
        OWNSHIP_PARAM,
        DISTANCE_UNIT_PARAM,
    ),
    handler=handle,
)
