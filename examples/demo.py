"""See the gate catch a breaking change, in a throwaway git repository.

    python examples/demo.py            # text report (default)
    python examples/demo.py --format markdown
    python examples/demo.py --accept shop.orders

Every argument is passed on to the gate (``schema-gate --help`` lists them).

It copies ``examples/shop`` (four Soda contracts of a web shop) into a temporary
git repository as ``main``, opens a "pull request" branch with the edits in
``examples/shop-pr`` (a column dropped and a type narrowed in ``orders``, a
column added, a type widened in ``payments``), and runs ``schema-gate --base
main`` there exactly as you would (the console script installed beside this
Python; ``python -m gate`` from a bare checkout). Nothing outside the temp dir changes.

The gate is expected to exit 1 (unacknowledged breaking change); the demo then
exits 0. Any other gate exit code makes the demo fail, so CI can run it too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def build_repo(repo: Path) -> None:
    shutil.copytree(HERE / "shop", repo, dirs_exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "demo@example.com")
    git(repo, "config", "user.name", "Demo")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Shop contracts")
    git(repo, "switch", "-q", "-c", "feature/slim-orders")
    shutil.copytree(HERE / "shop-pr", repo, dirs_exist_ok=True)
    git(repo, "commit", "-q", "-am", "Slim down orders, widen payments")


def main(argv: list[str]) -> int:
    if {"-h", "--help"} & set(argv):  # the demo's own help, not the gate's run on the demo
        print(__doc__.strip())
        return 0
    with tempfile.TemporaryDirectory(prefix="schema-gate-demo-") as tmp:
        repo = Path(tmp)
        build_repo(repo)
        # The documented safe form: the console script's import path starts at its
        # own folder, never at the repository it judges (README, "Run it").
        script = shutil.which("schema-gate", path=str(Path(sys.executable).parent))
        gate = [script] if script else [sys.executable, "-m", "gate"]
        command = [*gate, "--base", "main", "--head", "HEAD", *argv]
        shown = "schema-gate" if script else "python -m gate"
        print(f"$ cd <demo repo> && {shown} {' '.join(command[len(gate) :])}\n", flush=True)
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        env.pop("ACCEPT_BREAKING_CHANGE", None)
        result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    code = result.returncode
    print(f"\n(the gate exited with {code})")
    # Python itself exits 1 on a crash, so also look for the gate's own verdict.
    if code == 1 and "FAIL:" in result.stdout and "Traceback" not in result.stderr:
        print(
            "That is the gate doing its job: the PR breaks lakehouse/shop/orders and "
            "nobody acknowledged it.\nTry: python examples/demo.py --accept shop.orders"
        )
        return 0
    if code == 0 and "PASS:" in result.stdout and any(a.startswith("--accept") for a in argv):
        return 0
    if code == 2 and "Traceback" not in result.stderr:
        print("The gate could not run with these arguments: its error is above.", file=sys.stderr)
        return 2
    print("unexpected exit code: the demo expected 1 (breaking change found)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
