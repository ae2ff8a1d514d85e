"""The ground floor: small leaf modules every package may import, and that import no other part.

- errors.py: the exception tree; each error carries its exit code;
- jsondata.py: `JSONObject`, the type of JSON and YAML data at the edges, and strict JSON I/O;
- text_safety.py: untrusted text made safe for a terminal, markdown or HTML;
- tables.py: every printed table (tabulate lives here) and the number formats they share;
- version.py: `__version__`.
"""
