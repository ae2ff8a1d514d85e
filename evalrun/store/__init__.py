"""The run store: what a run leaves in results/<run_id>/, and how it is found again.

- records.py: the records (run.json's `RunRecord` and its `Summary`, items.jsonl's `ItemRecord`)
  and their `schema_version`;
- jsonl.py: JSONL I/O (one record a line, appended whole, read back on \\n only, a torn tail moved
  aside);
- folders.py: run ids and claiming a run's folder;
- runs.py: `RunStore` (writing run.json and items, reading them back, references: ids,
  `latest`, tags) and whether a running run's process is still alive;
- summary.py: a `Summary` counted from item records.
"""

from __future__ import annotations

from evalrun.store.folders import claim_folder, new_run_id, now_iso, slug
from evalrun.store.jsonl import (
    TORN_SUFFIX,
    dump_json_line,
    json_text,
    numbered_rows,
    read_jsonl_records,
    repair_tail,
)
from evalrun.store.records import (
    SCHEMA_VERSION,
    CategoryTally,
    Diagnosis,
    ItemRecord,
    ItemStatus,
    RunRecord,
    RunStatus,
    SuiteRef,
    Summary,
)
from evalrun.store.runs import (
    DEFAULT_RESULTS,
    RESERVE_BYTES,
    RESERVE_NAME,
    RunKind,
    RunStore,
    filter_runs,
    shown_status,
)
from evalrun.store.summary import (
    by_design_note,
    garble_cell,
    garble_split,
    lane_diagnoses,
    summarize,
)

__all__ = [
    "DEFAULT_RESULTS",
    "RESERVE_BYTES",
    "RESERVE_NAME",
    "SCHEMA_VERSION",
    "TORN_SUFFIX",
    "CategoryTally",
    "Diagnosis",
    "ItemRecord",
    "ItemStatus",
    "RunKind",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "SuiteRef",
    "Summary",
    "claim_folder",
    "dump_json_line",
    "by_design_note",
    "filter_runs",
    "garble_cell",
    "garble_split",
    "json_text",
    "lane_diagnoses",
    "new_run_id",
    "now_iso",
    "numbered_rows",
    "read_jsonl_records",
    "repair_tail",
    "shown_status",
    "slug",
    "summarize",
]
