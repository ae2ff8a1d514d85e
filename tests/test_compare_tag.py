import json

from support.synthruns import items_for, write_run

from evalrun.cli import main
from evalrun.store import RunStore


def test_tag_names_an_anchor_usable_as_a_run_id(tmp_path, capsys):
    store = RunStore(tmp_path / "results")
    write_run(store, "2026-09-28_120000_sglang", items_for(failing=["math-001"]))
    write_run(store, "2026-09-28_200000_vllm", items_for())
    root = str(store.root)
    assert main(["tag", "--results", root, "latest:sglang", "sglang-anchor"]) == 0
    assert "sglang-anchor -> 2026-09-28_120000_sglang" in capsys.readouterr().out
    assert store.resolve("sglang-anchor") == "2026-09-28_120000_sglang"
    # usable in compare and signoff
    assert main(["compare", "--results", root, "sglang-anchor", "latest", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["a"]["run_id"] == "2026-09-28_120000_sglang"
    assert (
        main(["signoff", "--results", root, "--candidate", "latest", "--baseline", "sglang-anchor"])
        == 0
    )
    capsys.readouterr()
    # moving a tag says where it was
    assert main(["tag", "--results", root, "latest", "sglang-anchor", "--json"]) == 0
    moved = json.loads(capsys.readouterr().out)
    assert moved == {
        "tag": "sglang-anchor",
        "run_id": "2026-09-28_200000_vllm",
        "previous": "2026-09-28_120000_sglang",
    }
    assert main(["tag", "--results", root]) == 0
    assert "sglang-anchor  2026-09-28_200000_vllm" in capsys.readouterr().out


def test_tag_refuses_bad_names_and_unknown_runs(tmp_path, capsys):
    store = RunStore(tmp_path / "results")
    write_run(store, "2026-09-28_120000_sglang", items_for())
    root = str(store.root)
    assert main(["tag", "--results", root, "latest", "latest"]) == 2
    assert main(["tag", "--results", root, "latest", "a b"]) == 2
    assert main(["tag", "--results", root, "latest", "2026-09-28_120000_sglang"]) == 2
    assert main(["tag", "--results", root, "no-such-run", "anchor"]) == 2
    assert main(["tag", "--results", root, "latest"]) == 2
    assert store.tags() == {}
