"""check(), assert_correct() and repro(): a suite run on a Python callable, and its verdicts.

check() resolves the suite as the ``gnncheck`` command does (a path, or a shipped name: ci,
default, full, …), narrows it to the target (python/src/session.h says how), registers the callable
as the system under test and calls the engine's suites::run_suite with jobs = 1. Every result comes
back as a Verdict with the engine's outcome. The run passes when every verdict held its expectation
(pass, or the neutral not applicable and skipped) and the run was not interrupted; fail, error,
inconclusive and not tested (also: the callable concluded nothing anywhere) fail it.

Re-running: every failure carries one command line that reproduces it: the same test (or script)
with GNNCHECK_SEED (the run's seed; it overrides seed= of every call) and GNNCHECK_ONLY
(suite/entry/check: just that check of that entry) in the environment.
"""

import json
import numbers
import os
import re
import shlex
import sys
import tempfile

from . import _context, _core
from ._system import Evaluator, UsageError, check_device, detect_framework, make_backend

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_UNSET = object()
_DEFAULTS = {"precision": "float32", "accumulation": None, "implements": None, "device": "cpu", "suite": "ci", "framework": "auto", "seed": None,
             "only": None, "report_dir": None, "progress": None, "name": None}


class Verdict:
    """One result: a check of the system on the target within one suite entry.

    outcome (the engine's): "pass" (every conclusive case within its bound, and at least one);
    "fail" (a case exceeded its bound or broke a property: shrunk and saved); "error" (the callable
    raised, or answered with missing, misshapen or non-finite tensors); "not applicable" (the check
    says nothing about this target or precision, e.g. finite differences of a float32 system);
    "inconclusive" (cases ran, none could decide); "not tested" (the callable answered none of the
    cases: gnncheck.Unsupported everywhere, the time budget, an interrupt); "skipped".
    expectation_held: pass, not applicable and skipped hold; the others fail the run.
    """

    __slots__ = ("entry", "system", "target", "check", "outcome", "expectation_held", "precision", "metric_name", "metric",
                 "bound", "tolerance_model", "seed", "suite_seed", "cases", "conclusive_cases", "message", "counterexample",
                 "seconds", "rerun")

    def __init__(self, **fields):
        for k in self.__slots__:
            setattr(self, k, fields.get(k))

    @property
    def passed(self):
        return self.outcome == "pass"

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def load_counterexample(self):
        """The saved shrunk case (target, check, seed, n_dst, n_src, num_edges, graph, attributes), or None."""
        return load_counterexample(self.counterexample) if self.counterexample else None

    def one_line(self):
        ratio = ""
        if self.metric is not None and self.bound:
            ratio = ", worst %.3g of its bound" % (self.metric / self.bound)
        return "%-14s %s/%s %s/%s: %d cases, %d conclusive%s" % (
            self.outcome, self.system, self.target, self.entry or "-", self.check, self.cases or 0,
            self.conclusive_cases or 0, ratio)

    def __repr__(self):
        return "<Verdict %s>" % self.one_line()


class CheckRun(list):
    """The verdicts of one check() call (a list), with the run's suite, seed and report directory."""

    def __init__(self, verdicts, suite_name, suite_path, seed, report_dir, seconds, system, target, precision, device,
                 interrupted_by=""):
        super().__init__(verdicts)
        self.interrupted_by = interrupted_by
        self.suite_name = suite_name
        self.suite_path = suite_path
        self.seed = seed
        self.report_dir = report_dir
        self.seconds = seconds
        self.system = system
        self.target = target
        self.precision = precision
        self.device = device

    @property
    def passed(self):
        return bool(self) and not self.interrupted_by and all(v.expectation_held for v in self)

    @property
    def failures(self):
        return [v for v in self if not v.expectation_held]


class CheckFailed(AssertionError):
    """The callable did not pass. ``run`` holds every verdict; the message leads with the worst one."""

    def __init__(self, run):
        self.run = run
        self.verdicts = list(run)
        super().__init__(_failure_message(run))

    @property
    def rerun(self):
        lead = _leading_failure(self.run)
        return lead.rerun if lead else None


# ---------------------------------------------------------------------------------------------

def _engine_dir():
    """The directory the suite lookup treats as the `gnncheck` command's (its ../share/gnncheck/suites):
    the installed prefix's bin/ in an installed tree; in the build tree the lookup falls back to the
    source tree's suites/."""
    try:
        from . import _install_location  # written by `cmake --install`
    except ImportError:
        return _PACKAGE_DIR
    return os.path.normpath(os.path.join(_PACKAGE_DIR, _install_location.BINDIR))


def _resolve_suite(suite):
    if not isinstance(suite, (str, os.PathLike)) or not os.fspath(suite):
        raise UsageError("suite=%r: expected a shipped suite's name (ci, default, full, leaks, …) or the path of a "
                         "suite file" % (suite,))
    return _core.resolve_suite(os.fspath(suite), _engine_dir())


def _require_only(only):
    """only=: None, or a list of "entry" / "entry/check" strings of the suite."""
    if only is None:
        return []
    if isinstance(only, (str, bytes)) or not isinstance(only, (list, tuple)) or not all(
            isinstance(item, str) and item for item in only):
        raise UsageError("only=%r: expected a list of 'entry' or 'entry/check' items of the suite, e.g. "
                         "only=['differential']" % (only,))
    return list(only)


def _narrowed(only, from_env):
    """The items of a call's own only= that GNNCHECK_ONLY's items (of this suite) leave: a re-run line
    narrows a call, it never adds to it. None: GNNCHECK_ONLY names nothing this call runs."""
    if not from_env:
        return only
    if not only:
        return from_env
    out = []
    for wanted in from_env:
        for own in only:
            if wanted == own or wanted.startswith(own + "/"):
                narrower = wanted
            elif own.startswith(wanted + "/"):
                narrower = own
            else:
                continue
            if narrower not in out:
                out.append(narrower)
    return out or None


def _system_name(name, forward, module):
    if name is None:
        subject = module if module is not None else forward
        name = getattr(subject, "__name__", None) or type(subject).__name__
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name)).strip("_.") or "python"
    return clean


def _env_seed():
    value = os.environ.get("GNNCHECK_SEED")
    if value is None or value == "":
        return None
    try:
        seed = int(value)
    except ValueError:
        seed = -1  # not an integer: the same message as out of range
    if not 0 <= seed < 2 ** 64:
        raise UsageError("GNNCHECK_SEED=%r: expected a non-negative integer below 2**64" % value)
    return seed


def _require_int(name, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise UsageError("%s=%r: expected an integer%s" % (name, value, " or None" if allow_none else ""))
    return int(value)


def _require_seed(value):
    """seed=: None (the suite's) or an integer a seed can hold (the engine's seeds are 64-bit unsigned)."""
    seed = _require_int("seed", value, allow_none=True)
    if seed is not None and not 0 <= seed < 2 ** 64:
        raise UsageError("seed=%r: expected a non-negative integer below 2**64" % value)
    return seed


def _env_only(suite_name):
    """GNNCHECK_ONLY=suite/entry/check[,…]: the items of this suite as "entry/check"."""
    value = os.environ.get("GNNCHECK_ONLY", "")
    out = []
    for item in filter(None, (s.strip() for s in value.split(","))):
        parts = item.split("/")
        if len(parts) not in (2, 3):
            raise UsageError("GNNCHECK_ONLY=%r: expected suite/entry or suite/entry/check items, comma-separated" % value)
        if parts[0] == suite_name:
            out.append("/".join(parts[1:]))
    return out


def _resolve_options(given):
    """Explicit arguments, then the test's @pytest.mark.gnncheck(...), then the defaults."""
    ctx = _context.current()
    marked = ctx.defaults if ctx is not None else {}
    unknown = sorted(set(marked) - set(_DEFAULTS) - {"backward", "module", "parameters"})
    if unknown:
        raise UsageError("@pytest.mark.gnncheck: unknown options %s; accepted: %s" % (
            ", ".join(unknown), ", ".join(sorted(_DEFAULTS))))
    out = {"defaulted": set()}
    for key, value in given.items():
        if value is _UNSET:
            if key not in marked:
                out["defaulted"].add(key)
            value = marked.get(key, _DEFAULTS.get(key))
        out[key] = value
    return out


def _report_dir(requested, share=None):
    """The call's report directory; for a share (part, of), its folder share-P-of-K in it (the merged
    report of every share goes to the directory itself)."""
    if requested is not None:
        if not isinstance(requested, (str, os.PathLike)) or not os.fspath(requested):
            raise UsageError("report_dir=%r: expected the path of a directory" % (requested,))
        path = os.path.abspath(os.fspath(requested))
    else:
        ctx = _context.current()
        path = ctx.new_report_dir() if ctx is not None else None
        if path is None:
            path = tempfile.mkdtemp(prefix="gnncheck-")
    if share is not None:
        path = os.path.join(path, "share-%d-of-%d" % share)
    os.makedirs(path, exist_ok=True)
    return path


def _reraise(abort):
    """A usage error found while the engine ran (a parameter mapping that cannot work): raised from
    the caller's call, without gnncheck's own frames. An interrupt keeps its traceback."""
    __tracebackhide__ = True
    if isinstance(abort, UsageError):
        raise abort.with_traceback(None) from None
    raise abort


def _rerun_line(suite_name, seed, entry, check, counterexample):
    """One shell line that runs the failing check again: the same test or script, narrowed."""
    env = ["GNNCHECK_SEED=%d" % seed]
    if entry:
        env.append("GNNCHECK_ONLY=" + shlex.quote("%s/%s/%s" % (suite_name, entry, check)))
    interactive = "gnncheck.repro(%r, <the same callable and options>)" % counterexample if counterexample else None
    return _rerun_with(env, interactive)


def _rerun_with(env, interactive):
    """The same test (pytest) or script again with the environment assignments `env`; `interactive`
    (a Python call, or None) where there is neither."""
    env = list(env)
    if os.environ.get("PYTHONPATH"):
        env.insert(0, "PYTHONPATH=" + shlex.quote(os.environ["PYTHONPATH"]))
    ctx = _context.current()
    if ctx is not None:
        cwd = ctx.rootdir or os.getcwd()
        command = [sys.executable, "-m", "pytest", ctx.nodeid]
    elif sys.argv and sys.argv[0] not in ("", "-c", "-") and os.path.isfile(sys.argv[0]):
        cwd = os.getcwd()
        command = [sys.executable] + sys.argv
    else:
        return interactive
    return "cd %s && %s %s" % (shlex.quote(cwd), " ".join(env), " ".join(shlex.quote(c) for c in command))


# The engine's messages end with the `gnncheck` command's own re-run hints (gnncheck run/repro,
# RapidCheck's reproduce string); they cannot reach a Python callable, so they are
# replaced by the one line above.
_CLI_RERUN = re.compile(r"\s*Re-run: .*$")
_CLI_REPRODUCE = re.compile(r"^Reproduce with: RC_PARAMS=")


def _clean_message(message):
    lines = []
    for line in (message or "").splitlines():
        if _CLI_REPRODUCE.match(line):
            continue
        lines.append(_CLI_RERUN.sub("", line))
    return "\n".join(lines).strip()


# The resources check's words for a system that measures no memory, and what is true of a callable
# in process on the cpu.
_NOTHING_MEASURED = re.compile(r"system '[^']*' reports neither live_bytes\(\) nor peak_bytes, and gnncheck measured "
                               r"neither its process's host memory nor device memory of it")
_NOTHING_MEASURED_ON_CPU = (
    "nothing measures a callable's memory in process on the cpu (torch counts no cpu tensors, and this process's "
    "resident memory holds gnncheck's own work too): check leaks with device='cuda' (torch.cuda.memory_allocated() "
    "and the device memory gnncheck reads), or run the kernel as an adapter process (gnncheck run leaks --adapter …), "
    "whose resident memory gnncheck watches")


def _verdict(raw, run_seed, suite_name, device="cpu"):
    fields = {k: raw[k] for k in Verdict.__slots__ if k in raw}
    v = Verdict(**fields, suite_seed=run_seed)
    v.message = _clean_message(raw["message"])
    if str(device) == "cpu":
        v.message = _NOTHING_MEASURED.sub(_NOTHING_MEASURED_ON_CPU, v.message)
    if not v.expectation_held:
        v.rerun = _rerun_line(suite_name, run_seed, v.entry, v.check, v.counterexample)
    return v


def _leading_failure(run):
    order = {"fail": 0, "error": 1, "inconclusive": 2, "not tested": 3}
    failures = run.failures
    if not failures:
        return None
    return min(failures, key=lambda v: (order.get(v.outcome, 4), v.counterexample is None))


def _failure_message(run):
    if hasattr(run, "failure_message"):  # a scale check's run says it in its own words
        return run.failure_message()
    failures = run.failures
    head = "gnncheck: system '%s' on target '%s' (%s on %s; suite %s, seed %d): " % (
        run.system, run.target, run.precision, run.device, run.suite_name, run.seed)
    if not failures:
        return head + "the run was interrupted by %s" % run.interrupted_by if run.interrupted_by else head + "no verdict"
    lead = _leading_failure(run)
    lines = [head + "%d of %d results did not pass." % (len(failures), len(run)), ""]
    lines.append("%s  %s/%s: %s" % (lead.outcome.upper(), lead.entry, lead.check, lead.message))
    if lead.counterexample:
        lines.append("counterexample (shrunk): %s" % lead.counterexample)
    lines.append("report: %s" % run.report_dir)
    if lead.rerun:
        lines.append("re-run: %s" % lead.rerun)
    others = [v for v in failures if v is not lead]
    if others:
        lines.append("")
        lines.append("also not passing:")
        for v in others:
            first = (v.message or "").splitlines()[0] if v.message else ""
            lines.append("  %s %s/%s: %s" % (v.outcome, v.entry, v.check, first[:300]))
    return "\n".join(lines)


def _progress_printer(enabled):
    if not enabled:
        return None

    def show(label, outcome):
        if outcome is not None:
            sys.stderr.write("gnncheck: %s %s/%s %s\n" % (label["target"], label["entry"], label["check"], outcome))
            sys.stderr.flush()

    return show


def _system(target, forward, backward, module, parameters, precision, device, framework, name, implements=None,
            device_defaulted=False, accumulation=None):
    if forward is None or not callable(forward):
        raise UsageError("forward must be a callable forward(case) -> {output name: tensor}, got %r" % (forward,))
    if backward is not None and not callable(backward):
        raise UsageError("backward must be a callable backward(case, outputs) -> {name: gradient}")
    if module is not None and not callable(module):
        raise UsageError("module must be a factory: module(case) -> torch.nn.Module")
    if parameters is not None and module is None:
        raise UsageError("parameters= maps a module's parameters; pass module= (a factory) too")
    specs = {t["name"]: t for t in _core.targets()}
    if target not in specs:
        raise UsageError("unknown target %r; known targets: %s" % (target, ", ".join(specs)))
    if precision not in _core.precisions():
        raise UsageError("precision %r: expected one of %s" % (precision, ", ".join(_core.precisions())))
    if accumulation is not None and accumulation not in _core.precisions():
        raise UsageError("accumulation %r: expected one of %s" % (accumulation, ", ".join(_core.precisions())))
    if accumulation is not None and not _core.accumulation_fits(precision, accumulation):
        raise UsageError("accumulation %r is coarser than the precision %r (sums must be computed at least as finely, "
                         "and with at least the range, as the values are stored)" % (accumulation, precision))
    device = check_device(device)
    framework = detect_framework(framework, module)
    if framework == "numpy" and backward is None:
        raise UsageError("framework 'numpy' has no autograd: pass backward=(case, outputs) -> {name: gradient}")
    if framework == "numpy" and module is not None:
        raise UsageError("module= needs framework 'torch'")
    backend = make_backend(framework, precision, device)
    evaluator = Evaluator(specs[target], forward, backward, module, parameters, precision, backend, device_defaulted)
    if implements is not None and not isinstance(implements, dict):
        raise UsageError("implements=%r: expected a dict {attribute: value or [values]}, e.g. {'source_degree': 'in'}"
                         % (implements,))
    system = {"name": _system_name(name, forward, module), "targets": {target: precision}, "evaluate": evaluator,
              "live_bytes": evaluator.live_bytes, "implemented": {target: implements} if implements else None,
              "on_device": bool(getattr(backend, "cuda", False)),
              "accumulation": {target: accumulation} if accumulation is not None else None}
    return system, evaluator


def check(target, forward=None, *, backward=None, module=None, parameters=None, precision=_UNSET, accumulation=_UNSET,
          implements=_UNSET, device=_UNSET, suite=_UNSET, framework=_UNSET, seed=_UNSET, only=_UNSET, report_dir=_UNSET, progress=_UNSET, name=_UNSET):
    """Runs `suite` on the callable for `target` and returns the verdicts (a CheckRun, never raises
    for what the callable does).

    forward     forward(case) -> {output name: tensor} (or the tensor, for a single output)
    backward    backward(case, outputs) -> {input or parameter name: gradient}, for systems without
                autograd; by default gradients come from torch.autograd.grad of the outputs
    module      a factory module(case) -> torch.nn.Module; its named parameters are overwritten with
                the case's parameters (see `parameters`) and the forward finds it as case.module
    parameters  {module parameter name: catalogue name or gnncheck.transposed(name)}; None: by name
    precision   the declared arithmetic: float64, float32, tf32, bfloat16, float16 (default float32); with
                `accumulation`, the format the callable's tensors are stored in
    accumulation the format its sums are computed in, where finer than `precision` (float16 tensors
                summed in float32: accumulation="float32"); default: `precision`
    implements  {attribute: value or [values]}: what the callable implements where it is fewer values
                than the target has — a convention, a mode, a shape ({"source_degree": "in"},
                {"heads": [1]}); every case is drawn within it and each result says what it left out.
                An opt-in attribute (`gnncheck.describe(target)`: sage's aggr and project, gin's
                aggr) is asked only where named here: {"aggr": ["mean", "max"]} to be tested on max
    device      "cpu" (the default), "cuda" or "cuda:N" (torch): where the case's tensors are
    suite       a suite file, or a shipped suite's name (default "ci"; "leaks": the resources check)
    framework   "auto" (torch when importable), "torch" or "numpy"
    seed        replaces the suite's seed (GNNCHECK_SEED in the environment overrides it)
    only        ["entry", "entry/check", ...]: just these (GNNCHECK_ONLY=suite/entry/check narrows it
                further; a call it does not reach is skipped)
    report_dir  where report.json, junit.xml, summary.md, index.html and cases/ go (default: the
                test's own folder under ROOTDIR/.gnncheck under pytest, see pytest_plugin; a fresh
                temporary directory otherwise)
    progress    True: one line per finished check on stderr
    name        the system's name in verdicts (default: the callable's name)
    """
    __tracebackhide__ = True
    o = _resolve_options({"precision": precision, "accumulation": accumulation, "implements": implements, "device": device, "suite": suite, "framework": framework, "seed": seed,
                          "only": only, "report_dir": report_dir, "progress": progress, "name": name})
    system, evaluator = _system(target, forward, backward, module, parameters, o["precision"], o["device"],
                                o["framework"], o["name"], o["implements"], device_defaulted="device" in o["defaulted"],
                                accumulation=o["accumulation"])
    suite_path = _resolve_suite(o["suite"])
    info = _core.suite_info(suite_path)
    env_seed = _env_seed()
    run_seed = env_seed if env_seed is not None else _require_seed(o["seed"])
    from_env = _env_only(info["name"])
    selected = _narrowed(_require_only(o["only"]), from_env)
    if selected is None:  # a re-run line for another call of this test
        return _not_rerun(o, info, run_seed, system["name"], target, from_env)
    ctx = _context.current()
    share = ctx.share if ctx is not None else None
    out_dir = _report_dir(o["report_dir"], share)
    effective_seed = run_seed if run_seed is not None else info["seed"]

    def rerun(entry, check, counterexample):  # what the report files and the saved case say
        return _rerun_line(info["name"], effective_seed, entry, check, counterexample) or \
            "gnncheck.check(<the same target, callable and options>, seed=%d, only=[%r])" % (
                effective_seed, "%s/%s" % (entry, check))

    raw = _core.run_suite(suite_path, target, system, seed=run_seed, report_dir=out_dir, write_reports=True,
                          only=selected, suite_argument=os.fspath(o["suite"]),
                          progress=_progress_printer(o["progress"] or os.environ.get("GNNCHECK_PROGRESS") == "1"),
                          rerun=rerun, share=share)
    if share is not None:
        ctx.record_share({"test": ctx.nodeid, "merged": os.path.dirname(out_dir), "dir": out_dir, "part": share[0],
                          "of": share[1], "target": target, "system": system["name"]})
    if evaluator.abort is not None:
        _reraise(evaluator.abort)
    verdicts = [_verdict(r, raw["seed"], raw["suite_name"], o["device"]) for r in raw["results"]]
    if share is not None and not verdicts:
        verdicts = [Verdict(entry=None, system=system["name"], target=target, check=None, outcome="skipped",
                            expectation_held=True, precision=o["precision"], seed=raw["seed"], suite_seed=raw["seed"],
                            cases=0, conclusive_cases=0,
                            message="share %d/%d of this run holds none of its cases: the other shares run them, and "
                                    "the session merges every share's report at its end (pytest_plugin)" % share)]
    return CheckRun(verdicts, raw["suite_name"], raw["suite_path"], raw["seed"], out_dir, raw["seconds"], system["name"],
                    target, o["precision"], str(o["device"]), raw["interrupted_by"])


def _not_rerun(o, info, seed, system, target, from_env):
    """The call of a test that a re-run line (GNNCHECK_ONLY) leaves out: one skipped verdict, nothing run."""
    v = Verdict(entry=None, system=system, target=target, check=None, outcome="skipped", expectation_held=True,
                precision=o["precision"], seed=seed, suite_seed=seed, cases=0, conclusive_cases=0,
                message="not run: GNNCHECK_ONLY=%s narrows this test to %s, which this call's only=%r does not include" % (
                    os.environ.get("GNNCHECK_ONLY", ""), ", ".join(from_env), o["only"]))
    return CheckRun([v], info["name"], info["path"], seed if seed is not None else info["seed"], None, 0.0, system,
                    target, o["precision"], str(o["device"]))


def assert_correct(target, forward=None, **options):
    """check(), raising CheckFailed (an AssertionError) unless the run passed; returns the verdicts.

    The message is the engine's failure message of the worst result (system, target, tensor, worst
    element with both values, bound, precision, seed), where its shrunk counterexample was saved,
    the report directory and one re-run line; then one line per other result that did not pass.
    """
    __tracebackhide__ = True  # pytest shows the message, not gnncheck's frames
    run = check(target, forward, **options)
    if not run.passed:
        raise CheckFailed(run)
    return run


def load_counterexample(case_dir):
    """A saved counterexample directory's case: target, system, check, seed, n_dst, n_src, num_edges,
    graph (one line), attributes and the recorded verdict message."""
    return _core.load_counterexample(os.fspath(case_dir))


def repro(case_dir, forward=None, *, backward=None, module=None, parameters=None, precision=None, device="cpu",
          framework="auto", name=None, raise_on_failure=True):
    """Re-runs the saved check on a saved counterexample (DIR/cases/<name>) with the callable.

    precision: default the one the case was recorded with. Returns the Verdict; raises CheckFailed
    when the case still fails and raise_on_failure is true.
    """
    __tracebackhide__ = True
    case_dir = os.path.abspath(os.fspath(case_dir))
    saved = load_counterexample(case_dir)
    if precision is None:
        with open(os.path.join(case_dir, "case.json"), encoding="utf-8") as f:
            precision = json.load(f).get("verdict", {}).get("precision") or "float32"
    system, evaluator = _system(saved["target"], forward, backward, module, parameters, precision, device, framework, name)
    raw = _core.repro(case_dir, system)
    if evaluator.abort is not None:
        _reraise(evaluator.abort)
    # The check's conclusion on the one case, in the report's words (only "pass" passes).
    outcome = {"unsupported": "not tested"}.get(raw["conclusion"], raw["conclusion"])
    v = Verdict(entry=None, system=raw["system"], target=raw["target"], check=raw["check"], outcome=outcome,
                expectation_held=outcome in ("pass", "not applicable"), precision=raw["precision"],
                metric_name=raw["metric_name"], metric=raw["metric"], bound=raw["bound"], seed=raw["seed"], cases=1,
                conclusive_cases=1 if outcome in ("pass", "fail", "error") else 0, message=_clean_message(raw["message"] or raw["detail"]),
                counterexample=case_dir)
    if raise_on_failure and not v.expectation_held:
        run = CheckRun([v], "repro", case_dir, raw["seed"], case_dir, 0.0, raw["system"], raw["target"], precision, device)
        raise CheckFailed(run)
    return v
