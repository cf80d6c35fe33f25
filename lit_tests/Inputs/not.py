"""Run a command that must fail with exit status 1 (lit helper, like LLVM's ``not``).

    python not.py CMD ARGS...
    python not.py --status=2 CMD ARGS...     (a bad command-line value: argparse's status)

Exits 0 if CMD exits with the expected status, else 1 (a crash, another status or success are
test failures).
"""

import subprocess
import sys

args = sys.argv[1:]
expected = 1
if args and args[0].startswith("--status="):
    expected = int(args.pop(0).split("=", 1)[1])
rc = subprocess.call(args)
if rc != expected:
    print(f"not.py: expected exit status {expected}, got {rc}", file=sys.stderr)
sys.exit(0 if rc == expected else 1)
