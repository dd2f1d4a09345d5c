"""Runs examples/ci/gnncheck-shards.yml here, as GitHub Actions would, on a small suite.

The workflow file is read (PyYAML), and its jobs run in the order of their `needs`: every matrix
value of a job is a fresh workspace; `run` steps run under bash -eo pipefail with the matrix,
strategy and env expressions substituted; actions/upload-artifact and download-artifact are copies
through a local artifact store, with their name/pattern/path semantics; a step runs after a failed
one only when its `if` says so (`!cancelled()`, `always()`, `failure()`). Not run: steps named
"Set up …" (installing packages), actions/checkout (the suite is given by path), and the `build`
job, whose artifact is the gnncheck command given here (at the path the job uploads). Any other
action or expression is refused, so the test fails when the workflow changes beyond what it checks.

Checks: a correct system's K shards merge to the unsplit run's report (timings aside) and the merge
step passes; a planted bug fails the merge step with its re-run line in the merged report; a shard
whose report never arrives leaves its tasks `not tested` and fails the merge.

    python3 examples/ci/workflow_test.py GNNCHECK [WORKFLOW]
"""

import fnmatch
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # ctest's SKIP_RETURN_CODE: skipped, with the reason shown
    print("skipped: PyYAML is not installed (apt-get install python3-yaml) — the workflow file cannot be read")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))

SUITE = """name: ci-shards-example
seed: 11
cases_per_property: 20
systems:
  - {name: %(system)s, required: true}
graphs:
  small: {family: random, max_nodes: 12, max_avg_degree: 3}
entries:
  - {name: ops, systems: %(system)s, targets: [spmm, spmm_ve, gcn], checks: [differential, adjoint], graphs: small, cases: 150}
  - {name: meta, systems: %(system)s, targets: [spmm, gat], checks: [metamorphic_relabel, numerics], graphs: small}
"""

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Refused(Exception):
    """The workflow uses something this test does not emulate."""


def substitute(text, context):
    def value(m):
        expr = m.group(1)
        scope, _, key = expr.partition(".")
        if scope in ("matrix", "strategy", "env") and key in context.get(scope, {}):
            return str(context[scope][key])
        raise Refused("expression ${{ %s }} is not emulated (matrix.*, strategy.job-total, env.* are)" % expr)
    return EXPRESSION.sub(value, str(text))


def condition_holds(condition, failed):
    """A step's or job's `if`: the status functions only (GitHub's default is success())."""
    if condition is None:
        return not failed
    expr = EXPRESSION.sub(lambda m: m.group(1), str(condition)).strip()
    known = {"always()": True, "!cancelled()": True, "success()": not failed, "failure()": failed, "cancelled()": False}
    if expr not in known:
        raise Refused("if: %s is not emulated" % condition)
    return known[expr]


class Artifacts:
    """upload-artifact / download-artifact (v4) through a local folder."""

    def __init__(self, root):
        self.root = root

    def upload(self, name, path, workspace):
        source = os.path.join(workspace, path)
        if not os.path.exists(source):
            print("  upload-artifact: no files at %s (artifact %s not uploaded)" % (path, name))
            return
        target = os.path.join(self.root, name)
        if os.path.exists(target):
            raise Refused("artifact %s uploaded twice" % name)
        if os.path.isdir(source):
            shutil.copytree(source, target)  # the folder's contents are the artifact's root
        else:
            os.makedirs(target)
            shutil.copy2(source, target)

    def download(self, name, pattern, path, workspace):
        dest = os.path.join(workspace, path or ".")
        if name:
            source = os.path.join(self.root, name)
            if not os.path.isdir(source):
                raise RuntimeError("download-artifact: no artifact named %s" % name)
            shutil.copytree(source, dest, dirs_exist_ok=True)
            return
        for found in sorted(os.listdir(self.root)):
            if pattern is None or fnmatch.fnmatch(found, pattern):  # each into PATH/<name>/
                shutil.copytree(os.path.join(self.root, found), os.path.join(dest, found), dirs_exist_ok=True)


def job_order(jobs):
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        needs = jobs[name].get("needs", [])
        for n in [needs] if isinstance(needs, str) else needs:
            visit(n)
        order.append(name)

    for name in jobs:
        visit(name)
    return order


def matrix_runs(job):
    matrix = (job.get("strategy") or {}).get("matrix")
    if not matrix:
        return [{}]
    if any(k in matrix for k in ("include", "exclude")):
        raise Refused("matrix include/exclude is not emulated")
    keys = list(matrix)
    return [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]


def run_workflow(workflow, gnncheck, suite_path, work, drop_artifacts=()):
    """Runs the workflow; returns {job: [(step label, exit status), …] per matrix run} and the store."""
    store = Artifacts(os.path.join(work, "artifacts"))
    os.makedirs(store.root)
    jobs = workflow["jobs"]
    outcome = {}
    for name in job_order(jobs):
        job = jobs[name]
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        needed_failed = any(any(s != 0 for run in outcome.get(n, []) for _, s in run) for n in needs)
        if not condition_holds(job.get("if"), needed_failed):
            outcome[name] = []
            continue
        if name == "build":  # its artifact: the gnncheck built here, where the job uploads it
            uploads = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
            if len(uploads) != 1 or uploads[0]["with"]["path"] != "build/suites/gnncheck":
                raise Refused("the build job should upload build/suites/gnncheck, once")
            os.makedirs(os.path.join(store.root, uploads[0]["with"]["name"]))
            shutil.copy2(gnncheck, os.path.join(store.root, uploads[0]["with"]["name"], "gnncheck"))
            outcome[name] = [[("build (the command given)", 0)]]
            continue
        runs = matrix_runs(job)
        outcome[name] = []
        for index, values in enumerate(runs):
            workspace = tempfile.mkdtemp(prefix="%s-%d-" % (name, index), dir=work)
            env = dict(os.environ)
            env.update({k: str(v) for k, v in (workflow.get("env") or {}).items()})
            env.update({k: str(v) for k, v in (job.get("env") or {}).items()})
            env["GNNCHECK_SUITE"] = suite_path  # the small suite in place of the workflow's
            context = {"matrix": values, "strategy": {"job-total": len(runs), "job-index": index}, "env": env}
            failed, statuses = False, []
            for step in job["steps"]:
                uses = str(step.get("uses", ""))
                label = substitute(step.get("name", uses or "run"), context)
                if not condition_holds(step.get("if"), failed):
                    continue
                status = 0
                if uses.startswith("actions/checkout@"):
                    continue
                elif "run" in step:
                    if label.startswith("Set up"):
                        continue
                    script = substitute(step["run"], context)
                    step_env = dict(env)
                    step_env.update({k: substitute(v, context) for k, v in (step.get("env") or {}).items()})
                    status = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                            cwd=workspace, env=step_env).returncode
                elif uses.startswith("actions/upload-artifact@"):
                    with_ = {k: substitute(v, context) for k, v in step["with"].items()}
                    if with_["name"] in drop_artifacts:
                        print("  (test) artifact %s lost" % with_["name"])
                    else:
                        store.upload(with_["name"], with_["path"], workspace)
                elif uses.startswith("actions/download-artifact@"):
                    with_ = {k: substitute(v, context) for k, v in step["with"].items()}
                    store.download(with_.get("name"), with_.get("pattern"), with_.get("path"), workspace)
                else:
                    raise Refused("action %s is not emulated" % uses)
                print("%s %s: %s exit %d" % (name, json.dumps(values), label, status))
                statuses.append((label, status))
                failed = failed or status != 0
            outcome[name].append(statuses)
    return outcome


def comparable(report_dir):
    with open(os.path.join(report_dir, "report.json")) as f:
        j = json.loads(f.read().replace(report_dir, "DIR"))
    for k in ("seconds", "started_utc"):
        j.pop(k, None)
    for r in j["results"]:
        r.pop("seconds", None)
    return j


def merge_status(outcome):
    [merge_run] = outcome["merge"]
    return dict(merge_run)["Merge the shards"]


def merged_dir(work):
    [merge_workspace] = [d for d in os.listdir(work) if d.startswith("merge-")]
    return os.path.join(work, merge_workspace, "merged")


def main():
    gnncheck = os.path.abspath(sys.argv[1])
    workflow_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "gnncheck-shards.yml")
    with open(workflow_path) as f:
        workflow = yaml.safe_load(f)
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)
            print("FAIL: " + what)

    top = tempfile.mkdtemp(prefix="gnncheck-ci-example-")
    try:
        suites = {}
        for system in ("cpu_float32", "tcgnn_backward_uses_A"):
            suites[system] = os.path.join(top, system + ".yaml")
            with open(suites[system], "w") as f:
                f.write(SUITE % {"system": system})
        k = len(matrix_runs(workflow["jobs"]["shard"]))
        expect(k > 1, "the shard job's matrix has %d values" % k)

        # A correct system: every shard and the merge pass, and the merge is the unsplit run.
        work = os.path.join(top, "pass")
        os.makedirs(work)
        outcome = run_workflow(workflow, gnncheck, suites["cpu_float32"], work)
        expect(all(s == 0 for run in outcome["shard"] for _, s in run), "a correct system's shard steps all pass")
        expect(merge_status(outcome) == 0, "the merge of a correct system's shards passes")
        whole = os.path.join(top, "whole")
        subprocess.run([gnncheck, "run", suites["cpu_float32"], "--progress", "plain", "--report", whole],
                       check=True, stdout=subprocess.DEVNULL)
        merged = merged_dir(work)
        expect(comparable(merged) == comparable(whole), "the merged report equals the unsplit run's (timings aside)")
        for name in ("junit.xml", "summary.md", "index.html"):
            expect(os.path.exists(os.path.join(merged, name)), "the merged report has %s" % name)
        shares = set()
        for d in os.listdir(os.path.join(top, "pass", "artifacts")):
            if d.startswith("gnncheck-shard-"):
                with open(os.path.join(top, "pass", "artifacts", d, "report.json")) as f:
                    s = json.load(f)["share"]
                shares.add((s["part"], s["of"]))
        expect(shares == {(p, k) for p in range(1, k + 1)}, "shards 1..%d of %d ran: %s" % (k, k, sorted(shares)))

        # A planted bug: the merge step fails on the merged verdict, with the failure's re-run line.
        work = os.path.join(top, "bug")
        os.makedirs(work)
        outcome = run_workflow(workflow, gnncheck, suites["tcgnn_backward_uses_A"], work)
        expect(merge_status(outcome) == 1, "the merge of a planted bug's shards exits 1")
        with open(os.path.join(merged_dir(work), "report.json")) as f:
            report = json.load(f)
        failed = [r for r in report["results"] if r["verdict"] == "fail"]
        expect(bool(failed) and not report["all_expectations_held"], "the merged report holds the bug's failures")
        expect(any(r["repro"].startswith("gnncheck repro ") and "merged/cases/" in r["repro"] for r in failed),
               "a failure's re-run line points into the merged report's cases/")

        # A shard whose report never arrives: its tasks are not tested and the merge fails.
        work = os.path.join(top, "lost")
        os.makedirs(work)
        outcome = run_workflow(workflow, gnncheck, suites["cpu_float32"], work, drop_artifacts=("gnncheck-shard-2",))
        expect(merge_status(outcome) == 1, "a merge missing shard 2 exits 1")
        with open(os.path.join(merged_dir(work), "report.json")) as f:
            report = json.load(f)
        expect(any(r["verdict"] == "not tested" and "2/%d" % k in r["message"] for r in report["results"]),
               "the missing shard's tasks are not tested, naming it")
    except Refused as e:
        failures.append(str(e))
        print("FAIL: the workflow uses what this test does not emulate: %s" % e)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("examples/ci workflow: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
