"""The one exception type for mistakes a user can fix.

The CLI prints ``UserError`` as one line (``triangulate: error: ...``) and exits non-zero; every
other exception is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A problem the user can fix (bad flag, missing data, unreadable file); the message says how."""
