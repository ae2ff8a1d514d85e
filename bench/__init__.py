"""Benchmarks and data builders: scripts that print figures or write the committed test data.

Run them from the repository root as modules (`python -m bench.garble_bench`), so they import
`evalrun`, each other (`bench.mismap`) and the test helpers (`tests.support`) like any package.
"""
