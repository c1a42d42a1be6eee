"""The correlation report: :func:`make_report` (``triangulation.report.make``) is its one entry point."""


def make_report(*args, **kwargs):
    """See :func:`triangulation.report.make.make_report` (imported on call: the report pulls in pandas and matplotlib)."""
    from triangulation.report.make import make_report as _make_report

    return _make_report(*args, **kwargs)
