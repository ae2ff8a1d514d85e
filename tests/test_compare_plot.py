import struct

import pytest
from support.synthruns import OTHER_SHA, items_for, write_run

from evalrun.cli import main
from evalrun.compare.plots import history_points, plot_history
from evalrun.store import RunStore


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def store(tmp_path):
    st = RunStore(tmp_path / "results")
    write_run(st, "2026-09-27_100000_sglang", items_for(failing=["math-001", "tools-002"]))
    write_run(st, "2026-09-28_100000_sglang", items_for(failing=["math-001"]))
    write_run(
        st, "2026-09-28_203145_vllm", items_for(failing=[f"tools-{k:03d}" for k in range(12)])
    )
    return st


def test_history_points_per_label_and_category(store):
    panels, order = history_points([store.load_run(i) for i in store.run_ids()])
    assert order[0] == "all items" and order[1:] == sorted(order[1:])
    assert set(panels["all items"]) == {"sglang", "vllm"}
    assert [round(p[1], 1) for p in panels["all items"]["sglang"]] == [98.9, 99.5]
    assert panels["tools"]["vllm"][0][1:] == (50.0, 12, 24)


@pytest.mark.slow
def test_runs_plot_writes_a_png(store, tmp_path, capsys):
    out = tmp_path / "history.png"
    assert main(["runs", "--results", str(store.root), "--plot", str(out)]) == 0
    width, height = png_size(out)
    assert width >= 800 and height >= 600  # 9 panels in a 3x3 grid
    assert "wrote" in capsys.readouterr().err


def test_one_run_and_several_suites_plot_cleanly(tmp_path):
    # filterwarnings=error: a single point must not trip matplotlib's identical-xlim warning
    st = RunStore(tmp_path / "r")
    one = write_run(st, "2026-09-27_100000_a", items_for({"math": 5}))
    plot_history([one], tmp_path / "one.png")
    other = write_run(st, "2026-09-28_100000_a", items_for({"math": 5}), sha=OTHER_SHA)
    panels, _ = history_points([one, other])
    assert set(panels["all items"]) == {"a (core-v1)", "a (core-v2)"}


def test_nothing_to_plot_is_exit_2(tmp_path, capsys):
    st = RunStore(tmp_path / "r")
    st.root.mkdir()
    assert main(["runs", "--results", str(st.root), "--plot", str(tmp_path / "x.png")]) == 2
    assert "no finished runs" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_runs_without_a_summary_are_left_out(tmp_path):
    st = RunStore(tmp_path / "r")
    running = write_run(
        st, "2026-09-27_100000_a", items_for({"math": 5}), status="running", summary=False
    )
    done = write_run(st, "2026-09-28_100000_b", items_for({"math": 5}))
    panels, _ = history_points([running, done])
    assert set(panels["all items"]) == {"b"}


def test_interrupted_runs_are_left_out_and_limited_runs_get_their_own_line(tmp_path):
    st = RunStore(tmp_path / "r")
    stopped = write_run(st, "2026-09-27_100000_a", items_for({"math": 5}), status="interrupted")
    full = write_run(st, "2026-09-28_100000_a", items_for({"math": 5}))
    short = full.model_copy(
        update={"run_id": "2026-09-29_100000_a", "selection": {"limit": 3, "tags": ["probe"]}}
    )
    panels, _ = history_points([stopped, full, short])
    assert set(panels["all items"]) == {"a", "a [limit 3, tags probe]"}
    assert len(panels["all items"]["a"]) == 1
