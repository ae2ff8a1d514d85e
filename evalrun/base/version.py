"""evalrun's version: a leaf, so the records that stamp it (run.json, slope records, provenance)
import it without reaching up to the package."""

__version__ = "0.1.0"
