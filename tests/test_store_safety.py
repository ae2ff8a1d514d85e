"""The store under pressure: a full disk, two writers of one run, a copied run folder.

Disk-full tests run on a small tmpfs mounted for the test (skipped where mounting is not allowed);
the others use real `evalrun score` processes against the fake server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakeserver import http_error, last_user, reply, simple_item
from support.synthruns import items_for
from test_reliability import assert_agrees

from evalrun.cli import main
from evalrun.store import RunStore


@pytest.fixture
def small_fs(tmp_path):
    """mount(size_kb) -> a folder on a fresh tmpfs of that size; unmounted after the test."""
    mounted: list[Path] = []

    def mount(size_kb: int) -> Path:
        where = tmp_path / f"fs{len(mounted)}"
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(where)],
            capture_output=True,
        )
        if done.returncode != 0:
            pytest.skip("cannot mount a tmpfs here")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path, leave: int) -> None:
    """Fill the filesystem of `folder` until `leave` bytes are free."""
    free = shutil.disk_usage(folder).free
    (folder / "ballast").write_bytes(bytes(max(0, free - leave)))


def test_a_batch_the_disk_cuts_short_leaves_no_record_behind(small_fs):
    root = small_fs(256)
    store = RunStore(root / "r")
    store.run_dir("a").mkdir(parents=True)
    store.append_items("a", items_for({"math": 2}))
    path = store.run_dir("a") / "items.jsonl"
    before = path.read_bytes()
    fill(root, 6000)
    with pytest.raises(OSError):
        store.append_items("a", items_for({"math": 40}))
    assert path.read_bytes() == before  # was: the whole records that fitted, counted nowhere


@pytest.mark.parametrize("free_kb", [40, 120, 330])
def test_disk_full_ends_with_a_summary_that_counts_the_file(
    fake_server, make_suite, small_fs, capsys, free_kb
):
    root = small_fs(2048)
    fill(root, free_kb * 1024)
    thought = "Let me think about this question carefully. " * 70  # ~3.5 KB a record
    fake_server.rule = lambda req: reply("ok", reasoning=thought)
    suite = make_suite([simple_item(i) for i in range(200)])
    code = main(
        ["score", "--endpoint", fake_server.base_url, "--suite", str(suite)]
        + ["--results", str(root / "r"), "--no-progress", "--name", "t"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--resume" in err
    record, rows = assert_agrees(root / "r")
    assert record["status"] == "incomplete" and record["summary"] is not None
    assert record["summary"]["passed"] == len(rows)  # every whole record counted, no more


def make_run(fake, make_suite, root: Path, n: int = 20, failing: int = 10) -> tuple[Path, str]:
    """A finished run of `n` items, the first `failing` in error (asked again on --resume)."""
    fake.rule = lambda req: (
        http_error(400, "no") if int(last_user(req).split()[1][:-1]) < failing else reply("ok")
    )
    suite = make_suite([simple_item(i) for i in range(n)])
    main(
        ["score", "--endpoint", fake.base_url, "--suite", str(suite), "--results", str(root)]
        + ["--no-progress", "--name", "t"]
    )
    fake.rule = lambda req: reply("ok")
    (folder,) = [p for p in root.iterdir() if (p / "run.json").exists()]
    return suite, folder.name


def test_a_second_resume_refuses_naming_the_first(fake_server, make_suite, tmp_path, capsys):
    root = tmp_path / "r"
    suite, run_id = make_run(fake_server, make_suite, root)
    capsys.readouterr()
    fake_server.latency = 0.3
    first = subprocess.Popen(
        [sys.executable, "-m", "evalrun", "score", "--resume", run_id, "--results", str(root)]
        + ["--suite", str(suite), "--no-progress", "--concurrency", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lock = root / run_id / ".lock"
    deadline = time.monotonic() + 30
    while f"pid {first.pid}" not in (lock.read_text() if lock.exists() else ""):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    asked = fake_server.chat_requests
    code = main(["score", "--resume", run_id, "--results", str(root), "--suite", str(suite)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"pid {first.pid}" in err and "--resume" in err
    assert first.wait(60) == 0
    assert fake_server.chat_requests - asked <= 10  # only the first asked: 10 items in error
    ids = [
        json.loads(x)["id"] for x in (root / run_id / "items.jsonl").read_text().split("\n")[:-1]
    ]
    assert len(ids) == 30 and len(set(ids)) == 20  # each re-asked item once more, not twice
    record, _ = assert_agrees(root)
    assert record["status"] == "complete"


def test_the_lock_goes_with_its_process(tmp_path):
    from evalrun.store.lock import RunLock

    folder = tmp_path / "r" / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\nfrom evalrun.store.lock import RunLock\n"
            f"RunLock(Path({str(folder)!r})).acquire(); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(Exception, match=f"pid {holder.pid}"):
        RunLock(folder).acquire()
    holder.kill()
    holder.wait()
    holder.stdout.close()
    RunLock(folder).acquire().release()  # kill -9 freed it


def test_resume_of_a_copied_folder_writes_into_the_copy(fake_server, make_suite, tmp_path):
    root = tmp_path / "r"
    suite, run_id = make_run(fake_server, make_suite, root)
    original = {p.name: p.read_bytes() for p in (root / run_id).iterdir() if p.is_file()}
    copy = root / "copy-of-run"
    shutil.copytree(root / run_id, copy)
    code = main(
        ["score", "--resume", "copy-of-run", "--results", str(root), "--suite", str(suite)]
        + ["--no-progress"]
    )
    assert code == 0
    after = {p.name: p.read_bytes() for p in (root / run_id).iterdir() if p.is_file()}
    assert after == original  # the original folder is untouched
    record = json.loads((copy / "run.json").read_text())
    assert record["status"] == "complete" and record["run_id"] == "copy-of-run"
    rows = (copy / "items.jsonl").read_text().split("\n")[:-1]
    assert len(rows) == 30
    assert os.path.exists(copy / "run.json")
