"""rttlab never deletes or overwrites a file it did not write (`rttlab.outputs`).

Every test works inside its own temporary tree, with the working directory moved into it, so a
bug can only harm that tree: a user's ``thesis.tex``, their scenario, a sibling directory."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import rttlab
from rttlab.cli import main as cli
from rttlab.outputs import CACHE_TAG, MARKER, OutputError, result_dir

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = (ROOT / "scenarios" / "timely-testbed-pfc.toml").read_text()
SHORT = ["--set", "duration=3ms", "--set", "warmup=1ms"]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """tmp/work/{s.toml, thesis.tex}, tmp/sibling/notes.txt; the working directory is tmp/work."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.toml").write_text(SCENARIO)
    (work / "thesis.tex").write_text("\\chapter{Results}\n")
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "notes.txt").write_text("keep me\n")
    monkeypatch.chdir(work)
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` with its bytes (links as their target)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(root))] = os.readlink(p).encode()
        elif p.is_file():
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def run_cli(args, capsys):
    """Runs the CLI in-process: (exit code, stderr)."""
    code = cli(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("out", [".", "..", "../sibling", "thesis.tex", "s.toml"])
def test_run_out_never_touches_what_it_did_not_write(tree, capsys, out):
    before = snapshot(tree)
    code, err = run_cli(["run", "s.toml", *SHORT, "--out", out], capsys)
    assert code == 2 and err.count("\n") == 1 and f"--out {out}" in err
    assert snapshot(tree) == before


def test_run_out_refuses_a_directory_holding_a_users_file(tree, capsys):
    (tree / "work" / "results").mkdir()
    (tree / "work" / "results" / "thesis.tex").write_text("draft\n")
    before = snapshot(tree)
    code, err = run_cli(["run", "s.toml", *SHORT, "--out", "results"], capsys)
    assert code == 2 and "is not an rttlab result" in err and MARKER in err
    code, err = run_cli(["run", "s.toml", *SHORT, "--out", "results", "--force"], capsys)
    assert code == 2 and "is not an rttlab result" in err
    assert snapshot(tree) == before


def test_an_earlier_result_is_replaced_only_with_force_and_only_if_all_its_files_are_rttlabs(tree, capsys):
    assert run_cli(["run", "s.toml", *SHORT, "--out", "results"], capsys)[0] == 0
    first = snapshot(tree / "work" / "results")
    listed = json.loads(first[MARKER])["files"]
    assert set(listed) | {MARKER} == set(first) and "summary.json" in listed
    code, err = run_cli(["run", "s.toml", *SHORT, "--out", "results", "--seed", "2"], capsys)
    assert code == 2 and "earlier rttlab result" in err and "--force" in err
    assert snapshot(tree / "work" / "results") == first
    assert run_cli(["run", "s.toml", *SHORT, "--out", "results", "--seed", "2", "--force"], capsys)[0] == 0
    second = snapshot(tree / "work" / "results")
    assert set(second) == set(first) and second["summary.json"] != first["summary.json"]
    # A file the user put among the results blocks the replacement, and survives.
    (tree / "work" / "results" / "my-plot.py").write_text("import pandas\n")
    code, err = run_cli(["run", "s.toml", *SHORT, "--out", "results", "--force"], capsys)
    assert code == 2 and "my-plot.py" in err
    assert (tree / "work" / "results" / "my-plot.py").read_text() == "import pandas\n"
    assert not [p for p in (tree / "work").iterdir() if p.name.startswith(".")]  # no temporary left


def test_an_empty_directory_is_used(tree, capsys):
    (tree / "work" / "empty").mkdir()
    assert run_cli(["run", "s.toml", *SHORT, "--out", "empty"], capsys)[0] == 0
    assert (tree / "work" / "empty" / "summary.json").is_file()


def test_a_symlink_is_refused_and_its_target_untouched(tree, capsys):
    (tree / "work" / "link").symlink_to(tree / "sibling")
    before = snapshot(tree)
    code, err = run_cli(["run", "s.toml", *SHORT, "--out", "link", "--force"], capsys)
    assert code == 2 and "symbolic link" in err
    assert snapshot(tree) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory anyway")
def test_a_directory_without_write_permission_is_refused(tree, capsys):
    locked = tree / "locked"
    locked.mkdir(mode=0o500)
    try:
        code, err = run_cli(["run", "s.toml", *SHORT, "--out", str(locked / "r")], capsys)
        assert code == 2 and "permission denied" in err
    finally:
        locked.chmod(0o700)


def test_paths_that_cannot_be_directories_are_one_line_errors(tree):
    for args in (
        ["--out", "/dev/null/x"],
        ["--out", "thesis.tex/x"],
        ["--cache", "/dev/null"],
        ["--cache", "thesis.tex"],
    ):
        p = subprocess.run(
            [sys.executable, "-m", "rttlab.cli", "sweep", "s.toml", "--grid", "seed=1", "--out", "x.csv", *args]
            if "--cache" in args
            else [sys.executable, "-m", "rttlab.cli", "run", "s.toml", *args],
            capture_output=True,
            text=True,
            cwd=tree / "work",
        )
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and args[1] in p.stderr, (args, p.stderr)
    assert sorted(p.name for p in (tree / "work").iterdir()) == ["s.toml", "thesis.tex"]


def test_reproduce_refuses_before_running_anything(tree, capsys):
    before = snapshot(tree)
    for out in (".", "../sibling"):
        code, err = run_cli(
            ["reproduce", "timely-table1", "--quick", "--no-progress", "--no-cache", "--out", out], capsys
        )
        assert code == 2 and f"--out {out}" in err
    assert snapshot(tree) == before


def test_sweep_out_replaces_a_file_only_with_force_and_never_a_directory(tree, capsys):
    args = ["sweep", "s.toml", *SHORT, "--grid", "seed=1", "--no-progress", "--no-cache"]
    code, err = run_cli([*args, "--out", "thesis.csv"], capsys)
    assert code == 0
    (tree / "work" / "thesis.csv").write_text("my data\n")
    code, err = run_cli([*args, "--out", "thesis.csv"], capsys)
    assert code == 2 and "exists; pass --force" in err
    assert (tree / "work" / "thesis.csv").read_text() == "my data\n"
    assert run_cli([*args, "--out", "thesis.csv", "--force"], capsys)[0] == 0
    assert "throughput_gbps" in (tree / "work" / "thesis.csv").read_text()
    (tree / "work" / "d.csv").mkdir()
    code, err = run_cli([*args, "--out", "d.csv", "--force"], capsys)
    assert code == 2 and "is a directory" in err
    assert sorted(p.name for p in (tree / "work").iterdir()) == ["d.csv", "s.toml", "thesis.csv", "thesis.tex"]


def test_the_cache_adopts_only_its_own_directories(tree, capsys):
    args = [
        "sweep",
        "s.toml",
        "--set",
        "duration=3ms",
        "--set",
        "warmup=1ms",
        "--grid",
        "seed=1",
        "--no-progress",
        "--out",
        "s.csv",
        "--force",
    ]
    code, err = run_cli([*args, "--cache", "../sibling"], capsys)
    assert code == 2 and "notes.txt" in err and "not rttlab cache entries" in err
    assert run_cli([*args, "--cache", "cache"], capsys)[0] == 0
    cache = tree / "work" / "cache"
    assert "rttlab" in (cache / CACHE_TAG).read_text() and len(list(cache.glob("*.json"))) == 1
    # A cache an earlier rttlab wrote without the tag (entries only) is adopted.
    (cache / CACHE_TAG).unlink()
    assert run_cli([*args, "--cache", "cache"], capsys)[0] == 0
    assert (cache / CACHE_TAG).is_file()


def test_save_and_a_failed_write_leave_the_target_as_it_was(tree):
    r = rttlab.run(tree / "work" / "s.toml", overrides={"duration": "3ms", "warmup": "1ms"})
    out = r.save(tree / "work" / "saved")
    with pytest.raises(OutputError, match="earlier rttlab result"):
        r.save(out)
    before = snapshot(out)
    with pytest.raises(RuntimeError), result_dir(out, force=True) as tmp:
        (tmp / "summary.json").write_text("half")
        raise RuntimeError("interrupted")
    assert snapshot(out) == before
    assert sorted(p.name for p in (tree / "work").iterdir()) == ["s.toml", "saved", "thesis.tex"]
    with pytest.raises(OutputError, match=r"thesis\.tex: exists and is not a directory"):
        r.save(tree / "work" / "thesis.tex", force=True)
