"""One folder per study: its tables, figures and findings inputs, built on analysis.models
and the shared readers, checks and report helpers (analysis/README.md: adding a study)."""
