"""Rebuild evalrun/data/garble_english.txt (the garble detector's spelling sample) from project prose.

Usage: python bench/build_garble_english.py [BUDGET_CHARS]   (default 60000)
"""

import json
import sys
from pathlib import Path

budget = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
out = [
    "# Clean English prose for the garble detector's character trigram model (evalrun/garble.py).",
    "# Sources, all written for this project: evalrun/data/filler.txt, then the English prompts",
    f"# and accepted answers of suites/core (multilingual items left out), up to ~{budget // 1000} KB.",
    "# Lines starting with # are skipped.",
]
out.append(Path("evalrun/data/filler.txt").read_text().strip())
seen = set()
size = sum(len(x) for x in out)
items = [json.loads(line) for line in open("suites/core/items.jsonl", encoding="utf-8")]
items.sort(key=lambda it: it["category"] == "long-context")  # short items first
for it in items:
    if it["category"] == "multilingual":
        continue
    texts = [m["content"] for m in it["messages"] if isinstance(m.get("content"), str)]
    texts += [a if isinstance(a, str) else (a.get("content") or "") for a in it["accept"]]
    for t in texts:
        for para in t.split("\n"):
            para = para.strip()
            if len(para) < 40 or para in seen:
                continue
            if sum(c.isalpha() or c == " " for c in para) / len(para) < 0.85:
                continue
            if size + len(para) > budget:
                break
            seen.add(para)
            out.append(para)
            size += len(para) + 1
Path("evalrun/data/garble_english.txt").write_text("\n".join(out) + "\n", encoding="utf-8")
print(size)
