"""`/clear` (docs/design.md §7): SessionEnd(clear) captures the conversation before it as kind `clear`, with
the uncommitted diff stat; the SessionStart(clear) that follows says what was captured.

The two hooks are separate processes with different session ids, and the upload may still be
in flight when the new session starts. They meet in the client's files: SessionEnd records in
the state, under the lock and in the same transaction that queues the segment, which queue entry
it wrote for this working tree; SessionStart takes that record and looks the entry up — sent
(`sent/<id>.json`, with the session's URL) or still queued.

The diff stat must describe the working tree *at the clear*, yet SessionEnd has 1.5 s shared
with every other SessionEnd hook, and `git diff` on a large repository can take longer. So it is
taken first thing in the detached process the hook starts (`uncommitted.json` in the entry),
before the uploader waits for its lock; preparing the segment takes it there, or computes it if
the detached step never ran.

Work committed after a clear and before the next prompt belongs to the conversation before the
clear, which wrote it (docs/design.md §7 "/clear"). SessionEnd also keeps the clear's segment as
`cleared` for the working tree; the first commit seen after it (`claim`, called by the git
post-commit hook and by the tool hook) becomes a checkpoint of that same byte range — an overlay
like a task's, so the offsets stay as they are and its attribution reads the conversation that
wrote the code — unless a later conversation here had a prompt before the commit was made.
"""

from __future__ import annotations

import os
import time

from sessionledger import gitrefs, log, paths, queue, state
from sessionledger.intent import Intent, Status

RECENT_SECONDS = 120.0  # a record older than this belongs to an earlier clear
CLAIM_SECONDS = 2 * 3600.0  # a commit this long after a clear is not the cleared conversation's
_MAX_PROMPT_SCAN = 8 * 1024 * 1024  # a later conversation is read this far for its prompts
_FORGET_SECONDS = 86400.0
UNCOMMITTED = "uncommitted.json"


def place(cwd: str) -> str:
    """Where a clear happened: the working tree's root (the cwd outside any repository)."""
    repo = gitrefs.find_repo(cwd)
    return os.path.realpath(repo.worktree if repo else cwd)


# --- SessionEnd -------------------------------------------------------------------------------


def remember(txn: state.Transaction, cwd: str, entry: queue.Entry | None, session_id: str | None) -> None:
    """Record what this clear captured (`entry` None: nothing new since the last capture)."""
    records = txn.data.get("clears")
    if not isinstance(records, dict):
        records = txn.data["clears"] = {}
    horizon = time.time() - _FORGET_SECONDS
    for key in [k for k, r in records.items() if not isinstance(r, dict) or r.get("at", 0) < horizon]:
        del records[key]
    records[place(cwd)] = {"entry": entry.id if entry else None, "session_id": session_id, "at": time.time()}
    cleared = txn.data.get("cleared")
    if not isinstance(cleared, dict):
        cleared = txn.data["cleared"] = {}
    for key in [k for k, r in cleared.items() if not isinstance(r, dict) or r.get("at", 0) < horizon]:
        del cleared[key]
    if entry is not None and entry.intent.capture is None:
        cleared[place(cwd)] = {"at": time.time(), "intent": entry.intent.to_json()}
    else:
        cleared.pop(place(cwd), None)


# --- a commit after the clear -------------------------------------------------------------------


def claim(
    txn: state.Transaction, repo: gitrefs.Repo, sha: str, old: str | None, branch: str, others: list[str]
) -> queue.Entry | None:
    """The checkpoint of `sha` for the conversation cleared here, when the commit came after the
    clear and before any prompt of the conversations `others`; None otherwise (then the commit is
    judged as usual). A claimed clear is forgotten: the next commit is the next conversation's."""
    from sessionledger import detect

    cleared = txn.data.get("cleared")
    if not isinstance(cleared, dict):
        return None
    key = os.path.realpath(repo.worktree)
    record = cleared.get(key)
    if not isinstance(record, dict) or not isinstance(record.get("intent"), dict):
        return None
    at, intent = float(record.get("at") or 0), Intent.from_json(record["intent"])
    if time.time() - at > CLAIM_SECONDS or intent.commit_hash == sha:
        return None
    if not detect.judge(repo, sha, at).capture:
        return None
    made = detect.commit_moment(repo, sha)
    mine = intent.transcript
    if made is None or any(prompted_between(path, at, made) for path in others if path != mine):
        del cleared[key]  # the next conversation started working: the cleared one is done
        return None
    del cleared[key]
    checkpoint = intent.replace(
        kind="checkpoint",
        commit_hash=sha,
        previous_head=old,
        feature_branch=branch,
        captured_at=time.time(),
        after_clear=True,
    )
    entry = queue.enqueue(checkpoint)
    log.info(f"commit {sha[:10]} made after /clear: linked to {intent.agent_session_id} as {entry.id}")
    return entry


def prompted_between(transcript: str, since: float, until: float) -> bool:
    """Did the conversation `transcript` have a prompt at a time in [since, until]? The `/clear`
    a conversation after a clear opens with is not one."""
    from sessionledger import agents, transcripts

    try:
        end, _ = transcripts.complete_end(transcript, 0)
        start = max(0, end - _MAX_PROMPT_SCAN)
        data = transcripts.read_range(transcript, start, end)
        messages = agents.for_transcript(transcript).format.parse(data).messages
    except Exception:  # an unreadable conversation has shown no prompt we can see
        log.exception(f"reading the prompts of {transcript} failed")
        return False
    for message in messages:
        if message.get("kind") != "prompt" or not isinstance(message.get("timestamp"), str):
            continue
        if message.get("command") == "/clear":
            continue
        when = transcripts.iso_to_epoch(message["timestamp"])
        if when is not None and since <= when < until + 1:  # `until`: a reflog's whole second
            return True
    return False


def snapshot_uncommitted(entry_id: str) -> None:
    """The detached step: write the working tree's diff stat into the queue entry, unless there."""
    entry = queue.Entry(os.path.join(paths.queue_dir(), entry_id))
    if entry.exists() and not os.path.exists(entry.file(UNCOMMITTED)):
        _write_uncommitted(entry)


def _write_uncommitted(entry: queue.Entry) -> dict:
    from sessionledger.worktree import uncommitted

    repo = entry.intent.repo or entry.intent.cwd
    stat = uncommitted(repo) if repo and os.path.isdir(repo) else {"files": 0, "insertions": 0, "deletions": 0}
    stat["taken_at"] = time.time()
    queue.write_json(entry.file(UNCOMMITTED), stat)
    return stat


# --- preparing the segment (detached uploader) ------------------------------------------------


def add_facts(entry: queue.Entry, metadata: dict, local: dict, parts: dict[str, bytes]) -> None:
    """A clear segment's diff stat and files (uncommitted work), and its message count."""
    stat = _read(entry.file(UNCOMMITTED)) or _write_uncommitted(entry)
    metadata["diff_stat"] = {k: int(stat.get(k) or 0) for k in ("files", "insertions", "deletions")}
    metadata["files_touched"] = list(stat.get("paths") or [])
    local["message_count"] = message_count(parts, entry.intent.agent)


def message_count(parts: dict[str, bytes], agent: str | None = None) -> int:
    """Messages as the server will count them (main transcript plus sub-agents)."""
    from sessionledger import agents

    main = parts.get("transcript", b"")
    subagents = {k: v for k, v in parts.items() if k != "transcript"}
    try:
        return agents.get(agent).format.parse(main, subagents=subagents or None).message_count
    except Exception:  # a count is decoration; the upload must not fail for it
        log.exception("counting the messages of a clear segment failed")
        return 0


# --- SessionStart -----------------------------------------------------------------------------


def take(cwd: str, *, wait: float) -> dict | None:
    """The record of a clear here in the last RECENT_SECONDS, removed from the state; waits up to
    `wait` seconds for SessionEnd to write it (it may still be running)."""
    key = place(cwd)
    deadline = time.monotonic() + wait
    while True:
        record = _pop(key)
        if record is not None or time.monotonic() >= deadline:
            return record
        time.sleep(0.05)


def _pop(key: str) -> dict | None:
    record = (state.load().get("clears") or {}).get(key)
    if not _fresh(record):
        return None
    try:
        with state.transaction(timeout=1.0) as txn:
            records = txn.data.get("clears")
            if isinstance(records, dict):
                records.pop(key, None)
    except TimeoutError:
        pass  # reported anyway; the record expires by itself
    return record


def _fresh(record: object) -> bool:
    return isinstance(record, dict) and time.time() - float(record.get("at") or 0) <= RECENT_SECONDS


class Captured:
    """What became of a clear's segment, as far as this machine knows."""

    def __init__(self) -> None:
        self.entry_id: str | None = None
        self.url: str = ""
        self.message_count: int | None = None
        self.stat: dict | None = None
        self.waiting: str = ""  # why it is still queued ("" once sent)

    def sentence(self) -> str:
        """`captured 42 messages as <url>; uncommitted: 3 files +12 −4`."""
        from sessionledger.worktree import describe

        if self.entry_id is None:
            what = "nothing new to capture since the last capture"
        else:
            count = f"{self.message_count} messages" if self.message_count is not None else "the conversation"
            where = f"as {self.url}" if self.url else f"(queued{': ' + self.waiting if self.waiting else ''})"
            what = f"captured {count} {where}"
        if self.stat is not None:
            what += f"; uncommitted: {describe(self.stat)}"
        return what


def outcome(record: dict, worktree: str, *, wait: float) -> Captured:
    """Follow a clear record to its segment: sent, prepared, or still waiting (then waits up to
    `wait` seconds for the uploader before counting and diffing by itself)."""
    captured = Captured()
    captured.entry_id = record.get("entry")
    if captured.entry_id is None:
        from sessionledger.worktree import uncommitted

        captured.stat = uncommitted(worktree, timeout=2.0) if os.path.isdir(worktree) else None
        return captured
    deadline = time.monotonic() + wait
    while not _read_sent(captured) and not _read_queued(captured, final=time.monotonic() >= deadline):
        time.sleep(0.05)
    return captured


def _read_sent(captured: Captured) -> bool:
    record = _read(os.path.join(paths.sent_dir(), f"{captured.entry_id}.json"))
    if record is None:
        return False
    session = record.get("session") or {}
    captured.url = str(session.get("web_url") or session.get("url") or "")
    captured.message_count = (record.get("local") or {}).get("message_count")
    captured.stat = (record.get("metadata") or {}).get("diff_stat")
    return True


def _read_queued(captured: Captured, *, final: bool) -> bool:
    """True when the queued entry says enough (prepared, or given up waiting: `final`)."""
    entry = queue.Entry(os.path.join(paths.queue_dir(), str(captured.entry_id)))
    if not entry.exists():
        return final  # between the queue and sent/: look again
    status = entry.status()
    tried = status.get("state", queue.PENDING) != queue.PENDING or int(status.get("attempts") or 0) > 0
    if not (tried or final):
        return False  # the uploader has not tried yet: its answer (the URL) may come in a moment
    captured.waiting = _waiting_reason(status)
    captured.message_count = entry.local().get("message_count") if entry.prepared else None
    captured.stat = _read(entry.file(UNCOMMITTED)) or (entry.metadata().get("diff_stat") if entry.prepared else None)
    if captured.message_count is None:
        captured.message_count = _count_intent(entry.intent)
    if captured.stat is None:
        captured.stat = _write_uncommitted(entry)
    return True


def _waiting_reason(status: Status) -> str:
    state_name = status.get("state", queue.PENDING)
    if state_name == queue.PENDING:
        return "upload pending" + (f", {status['reason']}" if status.get("reason") else "")
    return f"{state_name}: {status.get('reason') or 'see `sessionledger status`'}"


def _count_intent(intent: Intent) -> int | None:
    """Count the captured range straight from the transcript (the uploader has not yet)."""
    from sessionledger import transcripts

    try:
        parts = {"transcript": transcripts.read_range(intent.transcript, intent.start_offset, intent.end_offset)}
        for sub in intent.subagents:
            parts[sub.agent_id] = transcripts.read_range(sub.path, sub.start_offset, sub.end_offset)
    except (OSError, transcripts.TranscriptShrunk):
        return None
    return message_count(parts, intent.agent)


def _read(path: str) -> dict | None:
    from sessionledger.fastjson import loads

    try:
        with open(path, encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
