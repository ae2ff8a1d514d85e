import subprocess
import sys
import time

from evalrun.cli import main


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert "COMMAND" in out


def test_no_command_is_usage_error():
    assert main([]) == 2


def test_help_starts_fast():
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "evalrun", "--help"], capture_output=True)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    # Figure printed, not asserted as a timing: bench/score_overhead.py reports it.
    print(f"evalrun --help: {elapsed:.3f}s")
