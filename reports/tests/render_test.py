#!/usr/bin/env python3
"""Renders index.html in headless Chromium and checks the page as drawn, not as written.

usage: render_test.py --gnncheck PATH [--keep DIR]

For a passing run (`gnncheck run ci --entry differential --system cpu_float32`), a failing one
(the same with the bug replica `tcgnn_backward_uses_A` as the system under test) and an accuracy
report (reports/tests/data/accuracy_report.json, through `gnncheck report`), at 1280 and 1400 px:
  - nothing overflows its box: the page has no horizontal scroll, no cell, paragraph or figure is
    wider than its box, every table fits without scrolling, no SVG text is clipped by its SVG;
  - every plot has an x axis, a y axis and a legend, each with visible text, whose labels do not
    overlap; every counterexample drawing has its legend;
  - every link is relative and names a file or folder of the report directory, or an anchor of the page;
  - the shipped page has no script.
The measuring script is added to a copy of index.html made for this test only (index.measure.html,
removed afterwards); the shipped report never carries a script. Exits 77 (ctest: skipped) with the
reason when Chromium is not installed.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
WIDTHS = (1280, 1400)

# Runs in the test's copy of the page after layout; writes what it measured into the DOM, which
# --dump-dom then prints.
MEASURE = r"""
<script>
(function () {
  const out = {viewport: window.innerWidth, page_width: document.documentElement.scrollWidth, problems: [], plots: 0, graphs: 0,
               links: [], anchors: []};
  const problem = (what, el) => out.problems.push(what + ': ' + describe(el));
  function describe(el) {
    let s = el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined && el.className ? '.' + el.className : '');
    const text = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
    return s + ' "' + text + '"';
  }
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const body = document.body.getBoundingClientRect();
  // Boxes whose content must fit them.
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    let box = el.parentElement, inside_scroller = false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (scrolls(a)) { inside_scroller = true; break; }
    if (!inside_scroller && (r.right > body.right + 1 || r.left < body.left - 1)) problem('outside the page body', el);
    if (scrolls(el) && el.scrollWidth > el.clientWidth + 1) problem('needs to scroll (' + el.scrollWidth + ' > ' + el.clientWidth + ' px)', el);
    if (!scrolls(el) && ['TD', 'TH', 'P', 'PRE', 'FIGCAPTION', 'H1', 'H2', 'H3', 'DIV', 'LI', 'FIGURE'].includes(el.tagName) &&
        el.scrollWidth > el.clientWidth + 1)
      problem('content wider than its box (' + el.scrollWidth + ' > ' + el.clientWidth + ' px)', el);
  }
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  function texts_apart(group, what) {
    const rects = [...group.querySelectorAll('text')].map(t => [t, t.getBoundingClientRect()]);
    for (let i = 0; i < rects.length; ++i)
      for (let j = i + 1; j < rects.length; ++j)
        if (overlap(rects[i][1], rects[j][1])) problem(what + ' labels overlap ("' + rects[i][0].textContent + '", "' + rects[j][0].textContent + '")', group.ownerSVGElement || group);
  }
  for (const svg of document.querySelectorAll('svg')) {
    const s = svg.getBoundingClientRect();
    if (s.width < 50 || s.height < 30) problem('an SVG drawn too small (' + s.width + '×' + s.height + ')', svg);
    const parent = svg.parentElement.getBoundingClientRect();
    if (s.right > parent.right + 1) problem('an SVG wider than its box', svg);
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1)
        problem('SVG text clipped ("' + t.textContent + '")', svg);
    }
    const is_plot = svg.classList.contains('plot'), is_graph = svg.classList.contains('graph');
    if (!is_plot && !is_graph) problem('an SVG that is neither a plot nor a graph drawing', svg);
    if (is_plot) out.plots++;
    if (is_graph) out.graphs++;
    const parts = is_plot ? ['axis.x', 'axis.y', 'legend'] : ['legend'];
    for (const part of parts) {
      const g = svg.querySelector('g.' + part);
      if (!g) { problem('a plot without its ' + part.replace('.', ' '), svg); continue; }
      const labels = [...g.querySelectorAll('text')].filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0);
      if (labels.length < (part === 'axis.x' ? 3 : 1)) problem('the ' + part.replace('.', ' ') + ' has no visible labels', svg);
      if (part !== 'axis.y') texts_apart(g, part.replace('.', ' '));
    }
  }
  for (const a of document.querySelectorAll('a[href]')) out.links.push(a.getAttribute('href'));
  for (const el of document.querySelectorAll('[id]')) out.anchors.push(el.id);
  const pre = document.createElement('pre');
  pre.id = 'measurements';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_flags(profile, width):
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
            f"--window-size={width},1000"]


def measure(chromium, report_dir, width):
    page = os.path.join(report_dir, "index.html")
    with open(page, encoding="utf-8") as f:
        shipped = f.read()
    copy = os.path.join(report_dir, "index.measure.html")
    with open(copy, "w", encoding="utf-8") as f:
        f.write(shipped.replace("</body>", MEASURE + "</body>"))
    profile = tempfile.mkdtemp(prefix="gnncheck-chromium-")
    try:
        dom = subprocess.run([chromium, *chromium_flags(profile, width), "--dump-dom", "file://" + os.path.abspath(copy)],
                             capture_output=True, text=True, timeout=120).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)
        os.remove(copy)
    m = re.search(r'<pre id="measurements">(.*?)</pre>', dom, re.S)
    if not m:
        raise RuntimeError(f"{page}: Chromium printed no measurements (is the page valid HTML?)")
    return shipped, json.loads(html.unescape(m.group(1)))


def findings(report_dir, shipped, got, width, expect_graphs):
    """Every problem the measurements show, as sentences."""
    failures = []
    if "<script" in shipped.lower():
        failures.append("the shipped index.html has a script")
    if abs(got["viewport"] - width) > 20:
        failures.append(f"rendered {got['viewport']} px wide instead of {width}")
    if got["page_width"] > got["viewport"]:
        failures.append(f"the page scrolls sideways: {got['page_width']} px wide in a {got['viewport']} px window")
    failures += got["problems"]
    if got["plots"] == 0:
        failures.append("no plot was drawn")
    if expect_graphs and got["graphs"] == 0:
        failures.append("no counterexample was drawn")
    for link in got["links"]:
        if link.startswith("#"):
            if link[1:] not in got["anchors"]:
                failures.append(f"link {link}: no such anchor")
        elif re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I) or link.startswith("/"):
            failures.append(f"link {link} is not relative to the report")
        else:
            target = os.path.join(report_dir, *[html.unescape(p) for p in link.split("/") if p])
            target = re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), target)
            if not os.path.exists(target):
                failures.append(f"link {link}: {target} does not exist")
    return failures


def check(name, report_dir, shipped, got, width, expect_graphs):
    failures = findings(report_dir, shipped, got, width, expect_graphs)
    print(f"{name} at {width} px: {got['plots']} plots, {got['graphs']} counterexample drawings, {len(got['links'])} links, "
          f"{'ok' if not failures else str(len(failures)) + ' problems'}")
    for f in failures:
        print(f"  {name} at {width} px: {f}")
    return not failures


# A page with one of each defect the checks look for: the test first proves on it that they see them.
BROKEN_PAGE = """<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{max-width:600px;margin:0 auto}</style></head><body>
<table style='width:200px;table-layout:fixed'><tr><td>averyveryveryveryveryveryveryveryverylongunbreakableword</td></tr></table>
<svg class='plot' width='300' height='100'><g class='axis x'><text x='10' y='90'>0</text><text x='12' y='90'>1</text>
<text x='200' y='90'>2</text></g><g class='axis y'><text x='0' y='20'>y</text></g><text x='290' y='50'>clipped label</text></svg>
<a href='/etc/passwd'>absolute</a> <a href='cases/missing/'>missing</a> <a href='#nowhere'>anchor</a>
</body></html>"""

BROKEN_FINDINGS = ["content wider than its box", "a plot without its legend", "axis x labels overlap", "SVG text clipped",
                   "is not relative", "does not exist", "no such anchor"]


def checks_see_defects(chromium, work):
    """True when every check finds its defect on BROKEN_PAGE (the checks are not vacuous)."""
    folder = os.path.join(work, "broken")
    os.makedirs(folder)
    with open(os.path.join(folder, "index.html"), "w", encoding="utf-8") as f:
        f.write(BROKEN_PAGE)
    shipped, got = measure(chromium, folder, WIDTHS[0])
    found = findings(folder, shipped, got, WIDTHS[0], False)
    missing = [f for f in BROKEN_FINDINGS if not any(f in problem for problem in found)]
    for m in missing:
        print(f"the check for '{m}' did not see the defect planted in a test page")
    print(f"planted defects: {len(BROKEN_FINDINGS) - len(missing)} of {len(BROKEN_FINDINGS)} seen")
    return not missing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gnncheck", required=True)
    ap.add_argument("--source-dir", default=os.environ.get("GNNCHECK_SOURCE_DIR", os.getcwd()))
    ap.add_argument("--keep", help="also write a screenshot of each report at 1280 px into this folder")
    args = ap.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: Chromium is not installed (apt-get install chromium): index.html was not rendered")
        return SKIP
    start = time.time()
    work = tempfile.mkdtemp(prefix="gnncheck-render-")
    try:
        runs = [("passing run", "pass", ["--system", "cpu_float32"], 0, False),
                ("failing run", "fail", ["--system", "tcgnn_backward_uses_A"], 1, True)]
        reports = []
        for name, folder, system, want_rc, graphs in runs:
            out = os.path.join(work, folder)
            cmd = [args.gnncheck, "run", "ci", "--entry", "differential", *system, "--report", out]
            rc = subprocess.run(cmd, capture_output=True, text=True, cwd=args.source_dir).returncode
            if rc != want_rc:
                print(f"{' '.join(cmd)} exited {rc}, expected {want_rc}")
                return 1
            reports.append((name, out, graphs))
        accuracy = os.path.join(work, "accuracy")
        os.makedirs(accuracy)
        shutil.copy(os.path.join(args.source_dir, "reports/tests/data/accuracy_report.json"), os.path.join(accuracy, "report.json"))
        subprocess.run([args.gnncheck, "report", accuracy], capture_output=True, text=True)
        reports.append(("accuracy report", accuracy, False))

        ok = checks_see_defects(chromium, work)
        for name, folder, graphs in reports:
            for width in WIDTHS:
                shipped, got = measure(chromium, folder, width)
                ok = check(name, folder, shipped, got, width, graphs) and ok
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                profile = tempfile.mkdtemp(prefix="gnncheck-chromium-")
                shot = os.path.join(os.path.abspath(args.keep), os.path.basename(folder) + ".png")
                subprocess.run([chromium, *chromium_flags(profile, 1280)[:-1], "--window-size=1280,1400", f"--screenshot={shot}",
                                "file://" + os.path.join(folder, "index.html")], capture_output=True, timeout=120)
                shutil.rmtree(profile, ignore_errors=True)
        print(f"rendered {len(reports)} reports at {', '.join(map(str, WIDTHS))} px in {time.time() - start:.1f} s")
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
