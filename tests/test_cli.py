import argparse
import subprocess
import sys

import pytest

from evalrun.cli import COMMANDS, build_parser, main


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    missing = [name for name in COMMANDS if f"    {name} " not in out]
    assert not missing, f"commands absent from --help: {missing}"


@pytest.mark.parametrize("argv", [["-h", "score"], ["--debug", "--help", "runs"]])
def test_help_before_a_command_still_lists_every_command(capsys, argv):
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    assert all(f"    {name} " in out for name in COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_parses_alone_as_among_all(name):
    # `evalrun NAME ...` builds NAME's parser only: its help, usage and choices are the same.
    from support.clidocs import _walk

    def helps(parser: argparse.ArgumentParser) -> list[str]:
        return [p.format_help() for p in _walk(parser) if p.prog.startswith(f"evalrun {name}")]

    assert helps(build_parser(name)) == helps(build_parser())


def test_no_command_is_usage_error():
    assert main([]) == 2


def test_module_entry_point_and_no_heavy_imports_on_help():
    # `evalrun --help` must stay fast: the CLI may not import openai, pydantic models of runs,
    # tabulate or matplotlib before a command runs (bench/score_overhead.py prints the timing).
    code = (
        "import sys; from evalrun.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('openai', 'tabulate', 'matplotlib', 'git', 'rapidfuzz', 'wordfreq',"
        " 'pycld2', 'ftfy', 'langcodes')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr, proc.stderr
