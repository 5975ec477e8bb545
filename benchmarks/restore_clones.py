"""Make the clones the regression replay expects, from fetched mirrors, and list missing commits.

    python benchmarks/restore_clones.py --mirrors /work/.mirror [--clones /work/fetched] [NAME ...]
    python benchmarks/restore_clones.py --list-fetches

``benchmarks/replay_verdicts.py --check`` replays the commits stored under
``benchmarks/replay_baselines/``; each baseline names the public repository
(``repo``) and the folder under the clones' root it expects (``clone``). On a new
machine those clones are gone, and nothing of the replayed repositories is kept
here, so they are brought back from public snapshots. This script does not
download anything (the CI has no network to GitHub, which is why it is a
benchmark tool and not a test): whoever runs it first fetches each repository
that ``--list-fetches`` prints (with the workplace's ``fetch`` tool, which puts a
bare git directory at ``/work/.mirror/<owner>+<name>/repo``; any bare or normal
clone at ``<mirrors>/<owner>+<name>`` or ``<mirrors>/<owner>+<name>/repo`` does).

For each baseline (or each one whose file stem or repository is a NAME) it then
makes ``<clones>/<clone>`` with ``git clone --no-checkout`` of the mirror: the
gate reads both sides from git objects, so no work tree is needed, and a local
clone shares every object of the mirror (also those no branch reaches). A
clone that is already there is kept as it is. Then every stored sha, and the
first parent the replay diffs it against, is looked up in the clone; a
snapshot taken after a force-push can lack them, and git cannot fetch them
here. Prints one line per repository and exits 1 when a mirror or a commit is
missing (0 otherwise), so the replay is only trusted over a complete set.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

BASELINES = Path(__file__).resolve().parent / "replay_baselines"


@dataclass
class Restored:
    """What became of one baseline's clone."""

    repo: str
    clone: Path
    commits: int = 0
    made: bool = False
    mirror: Path | None = None
    missing: list[str] = field(default_factory=list)
    error: str = ""


def mirror_dir(mirrors: Path, repo: str) -> Path | None:
    """The git directory fetched for ``owner/name`` under ``mirrors``, or None."""
    folder = mirrors / repo.replace("/", "+")
    for candidate in (folder / "repo", folder):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    return None


def missing_commits(clone: Path, shas: list[str]) -> list[str]:
    """The shas that are not commits of ``clone``, or whose first parent is absent.

    One ``git cat-file --batch-check`` reads every name; a root commit (no
    parent) counts as missing too, since the replay has nothing to diff it with.
    """
    names = [name for sha in shas for name in (f"{sha}^{{commit}}", f"{sha}^1^{{commit}}")]
    proc = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "--batch-check=%(objecttype)"],
        input="".join(f"{name}\n" for name in names),
        capture_output=True,
        text=True,
        check=True,
    )
    answers = proc.stdout.splitlines()
    if len(answers) != len(names):
        raise RuntimeError(f"{clone}: git cat-file answered {len(answers)} of {len(names)} names")
    # a name that does not resolve is answered "<name> missing"
    return [sha for i, sha in enumerate(shas) if answers[2 * i : 2 * i + 2] != ["commit", "commit"]]


def restore(baseline: Path, mirrors: Path, clones: Path) -> Restored:
    """Clone the mirror of ``baseline``'s repository (unless its clone exists) and check its shas."""
    base = json.loads(baseline.read_text(encoding="utf-8"))
    repo, clone = str(base["repo"]), clones / str(base["clone"])
    shas = [str(entry["sha"]) for entry in base["commits"]]
    done = Restored(repo, clone, commits=len(shas), mirror=mirror_dir(mirrors, repo))
    if not (clone / ".git").exists():
        if done.mirror is None:
            done.missing, done.error = shas, f"no mirror (fetch github:{repo})"
            return done
        clone.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(done.mirror), str(clone)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines() or ["git clone failed"]
            done.missing, done.error = shas, f"{clone}: {lines[-1]}"
            return done
        done.made = True
    done.missing = missing_commits(clone, shas)
    return done


def baselines(folder: Path, names: list[str]) -> list[Path]:
    """Every baseline file in ``folder``, or those whose stem or repository is in ``names``."""
    files = sorted(folder.glob("*.json"))
    if not names:
        return files
    return [
        f
        for f in files
        if f.stem in names or json.loads(f.read_text(encoding="utf-8"))["repo"] in names
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="baseline file stems or owner/name (default: all)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--clones", type=Path, default=Path("/work/fetched"))
    parser.add_argument("--baselines", type=Path, default=BASELINES, help=argparse.SUPPRESS)
    parser.add_argument(
        "--list-fetches", action="store_true", help="print github:<owner>/<name> per baseline"
    )
    args = parser.parse_args(argv)
    files = baselines(args.baselines, args.names)
    if args.list_fetches:
        repos = sorted({json.loads(f.read_text(encoding="utf-8"))["repo"] for f in files})
        print("\n".join(f"github:{repo}" for repo in repos))
        return 0
    incomplete = 0
    total = absent = 0
    for path in files:
        done = restore(path, args.mirrors, args.clones)
        total += done.commits
        absent += len(done.missing)
        if done.error:
            print(f"- {done.repo}: {done.error}")
            incomplete += 1
            continue
        state = "cloned" if done.made else "kept"
        if done.missing:
            incomplete += 1
            print(
                f"- {done.repo}: {state} {done.clone}, {len(done.missing)} of {done.commits} "
                f"commits missing: {' '.join(sha[:12] for sha in done.missing)}"
            )
        else:
            print(f"- {done.repo}: {state} {done.clone}, all {done.commits} commits present")
    print(f"\n{len(files)} baselines, {total} commits, {absent} missing, {incomplete} incomplete")
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
