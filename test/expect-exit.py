#!/usr/bin/env python3
"""Runs a command and succeeds only if it exits with the given code.

Usage: expect-exit.py CODE COMMAND [ARGS...]
The command's output is passed through so that FileCheck can read it. A
command killed by a signal (a crash) never matches.
"""

import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:])
if result.returncode != expected:
    sys.stderr.write(
        f"expect-exit.py: expected exit code {expected}, got {result.returncode}\n"
    )
    sys.exit(1)
