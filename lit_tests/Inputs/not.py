"""Run a command that must fail with exit status 1 (lit helper, like LLVM's ``not``).

    python not.py CMD ARGS...

Exits 0 if CMD exits 1, else 1 (a crash, exit status 2 or success are test failures).
"""

import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
if rc != 1:
    print(f"not.py: expected exit status 1, got {rc}", file=sys.stderr)
sys.exit(0 if rc == 1 else 1)
