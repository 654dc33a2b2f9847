"""`sessionledger relink [RANGE]`: after a rebase or squash, tell the server which new commits carry
which old commits' sessions, so commit links, permalinks and `show <new sha>` keep working.

New commits (RANGE, by default `ORIG_HEAD..HEAD`: what the last rebase or reset rewrote) are
matched to old ones by `git patch-id --stable` — the same change on a new base has the same
patch id. Old commits come from the server (sessions of this branch store their commit's patch
id) and from this repository (ORIG_HEAD, `--old`, the branch's reflog). A new commit that
matches no single old commit is compared with runs of consecutive old commits: a squash has the
patch id of their combined diff. Pairs are posted to `POST …/commits/relink` (idempotent).
"""

from __future__ import annotations

import argparse
import os
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from sessionledger import gitmeta
from sessionledger.api import ApiError, Client
from sessionledger.commands.common import CommandError, api_error, client, load_config, project_for_cwd, short

MAX_COMMITS = 1000
MAX_SQUASH_RUN = 40  # old commits searched for squashes (pairs of them: quadratic)
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("relink", help="after a rebase/squash, link the new commits to the old ones' sessions")
    parser.add_argument("range", nargs="?", help="the rewritten commits (default: ORIG_HEAD..HEAD)")
    parser.add_argument("--old", action="append", default=[], help="a revision holding the old commits (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="show the pairs without telling the server")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


@dataclass
class Plan:
    new: list[str]  # rewritten commits, oldest first
    patch_ids: dict[str, str]  # new commit -> patch id
    pairs: dict[tuple[str, str], str] = field(default_factory=dict)  # (old, new) -> how matched


def run(options: argparse.Namespace) -> int:
    root = _root()
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    revision = options.range or _default_range(root)
    new = _rev_list(root, [revision])
    if not new:
        print(f"No commits in {revision}: nothing to relink.")
        return 0
    plan = Plan(new, _patch_ids(root, new))
    old_tips = _old_tips(root, options.old)
    try:
        _match_server(api, slug, root, plan)
        old = [c for c in _rev_list(root, [*old_tips, "^HEAD"]) if c not in plan.patch_ids] if old_tips else []
        _match_local(api, slug, root, plan, old)
        _match_squashes(api, slug, root, plan, old_tips)
    except ApiError as exc:
        raise api_error(exc) from None
    return _send(api, slug, root, plan, options.dry_run)


def _root() -> str:
    try:
        return gitmeta.git(os.getcwd(), "rev-parse", "--show-toplevel").strip()
    except gitmeta.GitError:
        raise CommandError("not inside a git repository") from None


def _default_range(root: str) -> str:
    for base in ("ORIG_HEAD", "@{upstream}"):
        if gitmeta.git(root, "rev-parse", "--verify", "--quiet", base, check=False).strip():
            return f"{base}..HEAD"
    raise CommandError("no ORIG_HEAD (no rebase or reset yet) and no upstream: give a RANGE such as main..HEAD")


def _rev_list(root: str, revisions: list[str]) -> list[str]:
    try:
        out = gitmeta.git(root, "rev-list", "--no-merges", "--reverse", f"--max-count={MAX_COMMITS}", *revisions, "--")
    except gitmeta.GitError as exc:
        raise CommandError(f"not a revision range git understands: {' '.join(revisions)} ({exc})") from None
    return out.split()


def _old_tips(root: str, given: list[str]) -> list[str]:
    """Where the old commits can still be found: --old, ORIG_HEAD, earlier tips of this branch."""
    tips = []
    for rev in [*given, "ORIG_HEAD"]:
        sha = gitmeta.git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
        if sha:
            tips.append(sha)
        elif rev in given:
            raise CommandError(f"--old {rev}: no such revision")
    branch = gitmeta.git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    if branch:
        reflog = gitmeta.git(root, "log", "-g", "--format=%H", "-n", "50", branch, "--", check=False)
        tips += reflog.split()
    return list(dict.fromkeys(tips))


def _patch_ids(root: str, commits: list[str]) -> dict[str, str]:
    """commit -> `git patch-id --stable`, for many commits in two git runs."""
    if not commits:
        return {}
    log = gitmeta._run(
        root, ("log", "--no-walk=unsorted", "-p", "--format=commit %H", "--stdin"), "\n".join(commits).encode()
    )
    out = gitmeta.git(root, "patch-id", "--stable", stdin=log.stdout)
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            found[parts[1]] = parts[0]
    return found


def _combined_patch_id(root: str, first: str, last: str) -> str:
    parent = gitmeta.git(root, "rev-parse", "--verify", "--quiet", f"{first}^", check=False).strip() or EMPTY_TREE
    diff = gitmeta._run(root, ("diff", "-p", "--no-color", parent, last), None)
    out = gitmeta.git(root, "patch-id", "--stable", stdin=diff.stdout, check=False).split()
    return out[0] if out else ""


def _sessions_with_commit(api: Client, slug: str, sha: str) -> list[dict[str, Any]]:
    return [s for s in api.get(f"/projects/{slug}/commits/{sha}").get("results", []) if s.get("commit_hash")]


def _pair(plan: Plan, old: str, new: str, how: str) -> None:
    if old != new and old not in plan.patch_ids:
        plan.pairs.setdefault((old, new), how)


def _match_server(api: Client, slug: str, root: str, plan: Plan) -> None:
    """Sessions of this branch whose stored patch id is a new commit's."""
    branch = gitmeta.git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    if not branch:
        return
    by_patch: dict[str, list[str]] = {}
    for new, patch in plan.patch_ids.items():
        by_patch.setdefault(patch, []).append(new)
    for session in _branch_sessions(api, slug, branch):
        for new in by_patch.get(session.get("patch_id") or "", []):
            _pair(plan, session["commit_hash"], new, "patch id")


def _branch_sessions(api: Client, slug: str, branch: str, pages: int = 10) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"branch": branch, "kind": "checkpoint", "limit": 200}
    found: list[dict[str, Any]] = []
    for _ in range(pages):
        page = api.get(f"/projects/{slug}/sessions", params)
        found += [s for s in page.get("results", []) if s.get("commit_hash")]
        cursor = urllib.parse.parse_qs(urllib.parse.urlsplit(page.get("next") or "").query).get("cursor")
        if not cursor:
            break
        params["cursor"] = cursor[0]
    return found


def _match_local(api: Client, slug: str, root: str, plan: Plan, old: list[str]) -> None:
    """Old commits still in this repository with a new commit's patch id (and sessions)."""
    by_patch: dict[str, list[str]] = {}
    for new, patch in plan.patch_ids.items():
        by_patch.setdefault(patch, []).append(new)
    for commit, patch in _patch_ids(root, old).items():
        for new in by_patch.get(patch, []):
            for session in _sessions_with_commit(api, slug, commit):
                _pair(plan, session["commit_hash"], new, "patch id")


def _match_squashes(api: Client, slug: str, root: str, plan: Plan, tips: list[str]) -> None:
    """A new commit whose diff is the combined diff of a run of consecutive old commits."""
    matched_new = {new for _, new in plan.pairs}
    wanted = [n for n in plan.new if n not in matched_new and n in plan.patch_ids]
    chains = _chains(root, tips) if wanted else []
    if not chains:
        return
    files = _files(root, [*wanted, *(c for chain in chains for c in chain)])
    tried: set[tuple[str, str]] = set()
    for chain in chains:
        for first, last, run in _runs(chain, files, [files.get(n, set()) for n in wanted], tried):
            patch = _combined_patch_id(root, first, last)
            for new in (n for n in wanted if plan.patch_ids[n] == patch):
                for commit in run:
                    for session in _sessions_with_commit(api, slug, commit):
                        _pair(plan, session["commit_hash"], new, f"squash of {len(run)}")


def _runs(chain: list[str], files: dict[str, set[str]], targets: list[set[str]], tried: set[tuple[str, str]]) -> Any:
    """(first, last, commits) of runs of ≥ 2 whose files cover some target's (cheap pruning)."""
    for i in range(len(chain)):
        touched = set(files.get(chain[i], set()))
        for j in range(i + 1, len(chain)):
            touched |= files.get(chain[j], set())
            if (chain[i], chain[j]) in tried or not any(t and t <= touched for t in targets):
                continue
            tried.add((chain[i], chain[j]))
            yield chain[i], chain[j], chain[i : j + 1]


def _chains(root: str, tips: list[str]) -> list[list[str]]:
    """First-parent lines of old commits (not in HEAD) ending at each tip; prefixes dropped."""
    chains = []
    for tip in tips:
        out = gitmeta.git(
            root, "rev-list", "--first-parent", "--reverse", f"--max-count={MAX_SQUASH_RUN}", tip, "^HEAD", "--",
            check=False,
        )  # fmt: skip
        if len(out.split()) >= 2:
            chains.append(out.split())
    unique = {tuple(c) for c in chains}
    return [list(c) for c in unique if not any(o != c and o[: len(c)] == c for o in unique)]


def _files(root: str, commits: list[str]) -> dict[str, set[str]]:
    log = gitmeta._run(
        root, ("log", "--no-walk=unsorted", "--name-only", "--format=%x00%H", "--stdin"), "\n".join(commits).encode()
    )
    found: dict[str, set[str]] = {}
    for block in log.stdout.decode("utf-8", "replace").split("\0")[1:]:
        sha, *names = block.split("\n")
        found[sha.strip()] = {n for n in names if n.strip()}
    return found


def _send(api: Client, slug: str, root: str, plan: Plan, dry_run: bool) -> int:
    if not plan.pairs:
        print(f"None of the {len(plan.new)} commit(s) matches an earlier commit with sessions: nothing to relink.")
        return 0
    for (old, new), how in sorted(plan.pairs.items(), key=lambda item: plan.new.index(item[0][1])):
        subject = gitmeta.git(root, "log", "-1", "--format=%s", new, check=False).strip()
        print(f"  {old[:10]} → {new[:10]}  ({how})  {short(subject, 60)}")
    if dry_run:
        print(f"{len(plan.pairs)} pair(s) found; --dry-run: nothing sent.")
        return 0
    pairs = [{"old": old, "new": new} for old, new in plan.pairs]
    linked = 0
    try:
        for start in range(0, len(pairs), 1000):
            linked += int(
                api.post_json(f"/projects/{slug}/commits/relink", {"pairs": pairs[start : start + 1000]})["linked"]
            )
    except ApiError as exc:
        raise api_error(exc) from None
    already = len(pairs) - linked
    note = f" ({already} already linked)" if already else ""
    print(f"Relinked {linked} pair(s){note}: the new commits now show their sessions.")
    return 0
