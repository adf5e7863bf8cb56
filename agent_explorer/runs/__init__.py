"""A store's runs: the run list (`summarize_runs`), cross-run search (`find_runs`), usage and coverage of a store.

Every row is derived by folding its thread through the machine on the fleet path (any executor); summaries
are cached outside the store, per user, keyed by what they were folded from. Needs no Jupyter: nothing here
imports the widget. Never writes to a store.
"""

from __future__ import annotations

from .find import find_runs
from .row import COLUMNS, STATUSES, RunSummary
from .store import StoreCoverage, StoreLedger, store_coverage, store_usage
from .summaries import RunSummaries
from .summarize import BatchRows, iter_run_batches, summarize_runs

__all__ = [
    "COLUMNS", "STATUSES", "BatchRows", "RunSummaries", "RunSummary", "StoreCoverage", "StoreLedger", "find_runs",
    "iter_run_batches", "store_coverage", "store_usage", "summarize_runs",
]
