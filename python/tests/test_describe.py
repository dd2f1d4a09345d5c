"""gnncheck.describe() and gnncheck.targets() read the formula and conventions from the engine's
catalogue: the same text as `gnncheck list TARGET` and adapters/PROTOCOL.md §10."""

import os
import subprocess

import pytest

import gnncheck


def test_every_target_is_described_with_its_formula_and_conventions():
    for target in gnncheck.targets():
        assert target["formula"] and target["conventions"], target["name"]
        text = gnncheck.describe(target["name"])
        assert target["formula"].splitlines()[0] in text
        for convention in target["conventions"]:
            assert convention in text
        for tensor in target["inputs"] + target["parameters"] + target["outputs"]:
            assert "  " + tensor["name"] + " " in text, (target["name"], tensor["name"])


def test_gcn_states_its_conventions():
    text = gnncheck.describe("gcn")
    for needle in ("Self-loops: edge (i, i) is appended to every destination row i", "column length",
                   "bias is [out_features]", "n_dst ≤ n_src", "weight  parameter  [in_features, out_features]"):
        assert needle in text, needle


def test_an_unknown_target_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown target 'gcm'; known targets: spmm"):
        gnncheck.describe("gcm")


def test_the_same_text_as_the_command():
    build = os.environ.get("GNNCHECK_BUILD_DIR")
    if not build:
        pytest.skip("GNNCHECK_BUILD_DIR is not set (ctest sets it)")
    command = os.path.join(build, "suites", "gnncheck")
    for target in ("agnn", "sddmm_add"):
        listed = subprocess.run([command, "list", target], capture_output=True, text=True, check=True).stdout
        assert listed == gnncheck.describe(target)
