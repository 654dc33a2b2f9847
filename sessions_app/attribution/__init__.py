"""Attribution: which lines of a commit the agent wrote, stored as Agent Trace records.

The client computes a record when it prepares a checkpoint (``sessionledger.core.attribution``) and
uploads it with the segment; ``validation`` checks it against the vendored Agent Trace schema
and against the commit, ``services`` stores it, ``selectors`` answers the API, ``explain`` the
``why`` question and the fallback for commits captured before attribution existed
(docs/attribution.md).
"""
