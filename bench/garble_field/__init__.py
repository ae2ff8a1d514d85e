"""Seeded garbled rows in the shapes public engine issues report, in four batches.

Each batch is one module writing one data set of tests/data/garble (`field1` writes
garbled_field.jsonl and loop_field.jsonl, `field2`-`field4` garbled_field2-4.jsonl; their rows'
sources start `field/`, `field2/` ...). A batch covers shapes the ones before it did not; its
hand-written material is bench/data/garble/<module>.yaml, its code the draws that turn the
material, `wordfreq`'s word lists and SmolLM2's vocabulary into texts of each shape
(bench/garble_material.py holds what the batches share). `python -m bench.build_data` runs them.
"""
