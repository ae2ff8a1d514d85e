"""Looking at stored runs: the HTML report and the exports dashboards and CI read.

runview.py loads a run with its items (the final attempt of each) and the prompts from its suite;
export.py writes one row per item as JSONL, CSV or JUnit XML; html.py renders one run, or a pair
with its paired statistics and sign-off verdict, as one self-contained page (page.py holds the
page's own CSS, script and Content-Security-Policy; history.py draws the label's score history as
inline SVG; evalrun.suite.prompt collapses long prompts around their needle).
"""

from __future__ import annotations

from evalrun.viewing.export import FORMATS, render_export, write_export
from evalrun.viewing.runview import RunView, load_view

__all__ = ["FORMATS", "RunView", "load_view", "render_export", "write_export"]
