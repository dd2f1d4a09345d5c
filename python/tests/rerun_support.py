"""What the re-run tests share: run a command as a user would (from /, with none of gnncheck's
re-run variables inherited from this process) and take the one `re-run:` line of its output."""

import os
import re
import subprocess

RERUN_VARIABLES = ("GNNCHECK_SEED", "GNNCHECK_ONLY", "GNNCHECK_SCALE_ONLY")


def run(command, shell=False, env_extra=None):
    env = {name: value for name, value in os.environ.items() if name not in RERUN_VARIABLES}
    env.update(env_extra or {})
    return subprocess.run(command, shell=shell, capture_output=True, text=True, env=env, cwd="/",
                          executable="/bin/bash" if shell else None, timeout=300)


def rerun_line(output):
    # pytest prints the failure twice when it runs under CI (CI=true: the short summary repeats the
    # whole message): the same line may appear twice, but there is one re-run command.
    lines = set(re.findall(r"^(?:E\s+)?\s*re-run: (.*)$", output, re.M))
    assert len(lines) == 1, output
    return lines.pop()
