"""The in-process runner answers exactly as the real process does (scenario tests rely on it)."""

from tests.conftest import run_gate_process, run_main


def test_main_in_process_answers_as_the_subprocess(repo):
    repo.write(
        "soda/contracts/a.yaml",
        "dataset: a\ncolumns:\n  - name: id\n    data_type: bigint\n  - name: x\n    data_type: int\n",
    )
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "pr")
    repo.write("soda/contracts/a.yaml", "dataset: a\ncolumns:\n  - name: id\n    data_type: int\n")
    repo.commit("pr")
    a = run_main(repo.path, "--base", "main")
    b = run_gate_process(repo.path, "--base", "main")
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), (a, b)
    assert a.returncode == 1
    c = run_main(repo.path, "--base", "-x")
    assert c.returncode == 2, c
    d = run_main(repo.path, "--help")
    assert d.returncode == 0 and "usage" in d.stdout
