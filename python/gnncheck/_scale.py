"""check_scale() and assert_correct_at_scale(): `gnncheck scale` on a Python callable, in process.

The callable is wrapped into the same system gnncheck.check() uses (_run._system: one Evaluator,
one case in, one answer out); the engine (python/src/scale_session.h) validates the options, builds
the graph on the host with the command's own generators — the same ``graph`` and ``seed`` give the
same graph as ``gnncheck scale --graph … --seed …`` — runs the callable ONCE on the whole graph,
forward and backward, with an output gradient that is nonzero only on the sampled rows, and holds
those rows' outputs and every gradient to the exact float64 oracle of their neighbourhood
(scale/README.md). The result is a CheckRun of one Verdict (entry "scale", check "scale").

Re-running: the result carries one line that repeats exactly this scale case — the same test (or
script) with GNNCHECK_SEED (the seed: graph, inputs, output gradient and rows) and
GNNCHECK_SCALE_ONLY=name/target (other check_scale calls of the test are skipped) in the
environment.
"""

import numbers
import os
import shlex

from . import _core
from ._run import (CheckFailed, CheckRun, Verdict, _UNSET, _clean_message, _env_seed, _reraise, _report_dir, _require_int,
                   _require_seed, _resolve_options, _rerun_with, _system)
from ._system import UsageError

_WIDTHS = ("features", "hidden_features", "out_features", "heads")


class ScaleRun(CheckRun):
    """The result of one check_scale() call: a CheckRun of one Verdict, and what the scale check saw.

    graph, graph_summary  the spec as given ("rmat:16,10") and the graph built ("Graph 65536×65536, … edges")
    strata         {stratum: sampled rows} ("highest in-degree", "random", "empty row", …)
    rows           [(row, stratum, in-degree)] of every sampled row, ascending
    comparisons    [{tensor, agrees, elements, elements_over_bound, worst_ratio}] per compared tensor
    worst          {tensor, index, actual, expected, bound, ratio, where}: the element nearest (or furthest past) its bound
    compared_elements, zero_checked_elements   inside the neighbourhood; gradient elements outside it, held to 0
    seconds        {graph, inputs, system, oracle, sampling, neighbourhood, exact, bounds, compare, total}
    callable_seconds, device_peak_bytes   the callable's forward and backward alone; its peak (CUDA, else None)
    summary        the text `gnncheck scale` prints, with this run's re-run line
    rerun          the one line that repeats this scale case
    """

    def __init__(self, verdict, raw, report_dir, device, callable_seconds, device_peak_bytes, rerun, skipped_by=None):
        super().__init__([verdict], "scale", "(gnncheck.check_scale)", verdict.seed, report_dir,
                         (raw or {}).get("seconds", {}).get("total", 0.0), verdict.system, verdict.target, verdict.precision,
                         str(device))
        raw = raw or {}
        self.graph = raw.get("graph")
        self.graph_summary = raw.get("graph_summary")
        self.strata = {k: v for k, v in raw.get("strata", {}).items() if v}
        self.rows = raw.get("rows", [])
        self.comparisons = raw.get("comparisons", [])
        self.worst = raw.get("worst")
        self.compared_elements = raw.get("compared_elements", 0)
        self.zero_checked_elements = raw.get("zero_checked_elements", 0)
        self.neighbourhood_edges = raw.get("neighbourhood_edges", 0)
        self.seconds = raw.get("seconds", {})
        self.callable_seconds = callable_seconds
        self.device_peak_bytes = device_peak_bytes
        self.summary = _with_host_seconds(raw.get("summary", verdict.message or ""), self.seconds, callable_seconds)
        self.rerun = rerun
        self.skipped_by = skipped_by

    @property
    def verdict(self):
        return self[0]

    def failure_message(self):
        v = self.verdict
        head = "gnncheck: system '%s' on target '%s' (%s on %s; scale check on %s, seed %d): %s" % (
            self.system, self.target, self.precision, self.device, self.graph, self.seed, v.outcome)
        lines = [head, "", self.summary.rstrip()]
        if self.report_dir:
            lines.append("report: %s (sampled rows and their strata: scale_rows.json)" % self.report_dir)
        return "\n".join(lines)


def _with_host_seconds(summary, seconds, callable_seconds):
    """The engine's summary with what it does not time itself — the graph built on the host, the
    callable's own forward and backward, the total — before its re-run line."""
    if not seconds:
        return summary
    extra = "  graph built on the host in %.2f s; the callable's forward and backward %s; total %.2f s" % (
        seconds["graph"], "%.2f s" % callable_seconds if callable_seconds is not None else "not measured (no answer)", seconds["total"])
    lines = summary.rstrip("\n").split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("  re-run:")), len(lines))
    return "\n".join(lines[:at] + [extra] + lines[at:]) + "\n"


def _scale_only():
    """GNNCHECK_SCALE_ONLY=name/target[,…]: the scale checks to run (None: all)."""
    value = os.environ.get("GNNCHECK_SCALE_ONLY", "")
    items = [s.strip() for s in value.split(",") if s.strip()]
    for item in items:
        if item.count("/") != 1:
            raise UsageError("GNNCHECK_SCALE_ONLY=%r: expected name/target items, comma-separated" % value)
    return set(items) or None


def _interactive_call(target, graph, options, widths, seed, precision, device):
    args = ["%r" % target, "<the same callable and options>", "graph=%r" % graph, "rows=%d" % options["rows"], "seed=%d" % seed]
    for budget in ("hub_edges", "hub_sources"):
        if options[budget] is not None:
            args.append("%s=%d" % (budget, options[budget]))
    if options["magnitude"] != 1.0:
        args.append("magnitude=%r" % options["magnitude"])
    args.extend("%s=%r" % (k, v) for k, v in widths.items() if v is not None)
    args.extend(["precision=%r" % precision, "device=%r" % str(device)])
    return "gnncheck.check_scale(%s)" % ", ".join(args)


def check_scale(target, forward=None, *, backward=None, module=None, parameters=None, graph=None, rows=1000, hub_edges=None,
                hub_sources=None, seed=_UNSET, magnitude=1.0, features=None, hidden_features=None, out_features=None, heads=None,
                norm=None, precision=_UNSET, device=_UNSET, framework=_UNSET, report_dir=_UNSET, name=_UNSET):
    """`gnncheck scale` on the callable: one evaluation on the whole graph, its sampled rows and every
    gradient held to the exact oracle. Returns a ScaleRun (never raises for what the callable does:
    an exception, a missing or misshapen tensor, gnncheck.Unsupported are an "error" verdict).

    graph       "kronecker:SCALE" | "rmat:SCALE[,EDGE_FACTOR]" | a .mtx or edge-list file (required)
    rows        K: destination rows to verify, stratified (default 1000)
    hub_edges   edge budget of the highest in-degree rows together (default 2**24)
    hub_sources budget of the distinct sources they read together (default 2**20)
    seed        the graph, the inputs, the output gradient and the rows (default 1; GNNCHECK_SEED overrides it)
    magnitude   inputs and output gradient uniform in [-magnitude, magnitude) (default 1)
    features, hidden_features, out_features, heads, norm   the target's widths (features: the input
                width, `features` of an op, `in_features` of a layer), heads, and norm
                ("symmetric" or "row_mean"); None: the target's default
    forward, backward, module, parameters, precision, device, framework, name   as for check()
    report_dir  where report.json, junit.xml, summary.md, index.html and scale_rows.json go (default:
                the test's folder under ROOTDIR/.gnncheck under pytest, a fresh temporary directory otherwise)
    """
    o = _resolve_options({"precision": precision, "device": device, "framework": framework, "seed": seed,
                          "report_dir": report_dir, "name": name})
    if graph is None:
        raise UsageError("graph: required — kronecker:SCALE, rmat:SCALE[,EDGE_FACTOR] or the path of a .mtx or edge-list file")
    if not isinstance(graph, (str, os.PathLike)):
        raise UsageError("graph=%r: expected a string (kronecker:SCALE, rmat:SCALE[,EDGE_FACTOR]) or a file path" % (graph,))
    graph = os.fspath(graph)
    options = {"rows": _require_int("rows", rows), "hub_edges": _require_int("hub_edges", hub_edges, allow_none=True),
               "hub_sources": _require_int("hub_sources", hub_sources, allow_none=True)}
    if isinstance(magnitude, bool) or not isinstance(magnitude, numbers.Real):
        raise UsageError("magnitude=%r: expected a positive finite number" % (magnitude,))
    options["magnitude"] = float(magnitude)
    widths = {k: _require_int(k, v, allow_none=True) for k, v in zip(_WIDTHS, (features, hidden_features, out_features, heads))}
    if norm is not None and not isinstance(norm, str):
        raise UsageError("norm=%r: expected 'symmetric' or 'row_mean'" % (norm,))
    widths["norm"] = norm
    env_seed = _env_seed()
    run_seed = env_seed if env_seed is not None else o["seed"]
    run_seed = 1 if run_seed is None else _require_seed(run_seed)

    system, evaluator = _system(target, forward, backward, module, parameters, o["precision"], o["device"], o["framework"],
                                o["name"], device_defaulted="device" in o["defaulted"])
    label = "%s/%s" % (system["name"], target)
    env = ["GNNCHECK_SEED=%d" % run_seed, "GNNCHECK_SCALE_ONLY=" + shlex.quote(label)]
    rerun = _rerun_with(env, _interactive_call(target, graph, options, widths, run_seed, o["precision"], o["device"]))
    only = _scale_only()
    if only is not None and label not in only:
        why = "not run: GNNCHECK_SCALE_ONLY=%s narrows the scale checks to %s" % (os.environ["GNNCHECK_SCALE_ONLY"],
                                                                                   ", ".join(sorted(only)))
        v = Verdict(entry="scale", system=system["name"], target=target, check="scale", outcome="skipped",
                    expectation_held=True, precision=o["precision"], seed=run_seed, suite_seed=run_seed, cases=0,
                    conclusive_cases=0, message=why, seconds=0.0)
        return ScaleRun(v, None, None, o["device"], None, None, rerun, skipped_by=why)

    out_dir = _report_dir(o["report_dir"])
    try:
        raw = _core.run_scale(system, target, graph, options["rows"], options["hub_edges"], options["hub_sources"], run_seed,
                              options["magnitude"], widths["features"], widths["hidden_features"], widths["out_features"], widths["heads"],
                              widths["norm"], rerun or "", out_dir)
    except _core.InputError as e:  # an option the scale check refuses, named in this call's spelling
        raise UsageError(str(e)) from None
    if evaluator.abort is not None:
        _reraise(evaluator.abort)
    v = Verdict(entry="scale", system=raw["system"], target=raw["target"], check="scale", outcome=raw["outcome"],
                expectation_held=raw["expectation_held"], precision=raw["precision"], metric_name=raw["metric_name"],
                metric=raw["metric"], bound=raw["bound"], tolerance_model=raw["tolerance_model"], seed=raw["seed"],
                suite_seed=raw["seed"], cases=1, conclusive_cases=0 if raw["outcome"] == "error" else 1,
                message=_clean_message(raw["message"]), seconds=raw["seconds"]["total"])
    if not v.expectation_held:
        v.rerun = rerun
    return ScaleRun(v, raw, out_dir, o["device"], evaluator.last_seconds, evaluator.last_peak_bytes, rerun)


def assert_correct_at_scale(target, forward=None, **options):
    """check_scale(), raising CheckFailed (an AssertionError) unless the check passed; returns the ScaleRun.

    The message is the scale check's summary: verdict, strata of the sampled rows, one line per
    compared tensor, the worst element with both values, where it lives and its bound, the tolerance
    model, the seed, the seconds, and the one re-run line; then the report directory.
    """
    __tracebackhide__ = True
    run = check_scale(target, forward, **options)
    if not run.passed:
        raise CheckFailed(run)
    return run


def scale_targets():
    """The targets a scale check supports (the engine's list: `gnncheck scale` refuses the others)."""
    return list(_core.scale_targets())
