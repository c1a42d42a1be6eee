"""The correlation report: :func:`triangulation.report.make.make_report` is its one entry point (imported from
``triangulation.report.make``: this package init imports nothing, so no module of the report imports itself back
through it)."""
