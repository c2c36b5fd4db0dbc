"""The org map: the organisation's consumer rows as one file, written by `subguard audit` and read by
`subguard check --org-map` (format, writer, reader). Standard library only at import: `check` reads
the map without Spark, pyarrow or a JVM (the Spark side, `write_audit`, imports pyspark when called).

Why SQLite: the standard library reads it (`sqlite3`, no extra dependency on the check path), one file
carries every table, and an index on `group` lets a check read only the rows of the groups its
working tree declares: a lookup of a few groups in a map of a million subscriptions costs
milliseconds and a few pages of memory, where JSON lines or a compressed JSON document would be read
whole and Parquet would need pyarrow. It is also what a platform team can query by hand
(`sqlite3 org-map.sqlite`).

Format `subguard-org-map`, version 1 (`meta.version`; a reader refuses a newer version):

- `meta(key, value)`: `format` = subguard-org-map, `version` = 1, `written` (UTC, ISO 8601: when the
  audit wrote the map), `subguard` (the version that wrote it), `sources` (JSON list of the audit's SOURCE
  arguments), `consumers`, `subscriptions`, `repos` (row counts).
- `repos(repo, commit, root, team, owner, environment)`: every audited repository, by the name the
  audit gives it (the first-level folder of an organisation folder, the `name` of an inventory
  entry, the file name of a jsonl inventory output); `commit` where known (a local git checkout),
  else NULL; team, owner and environment are the inventory's hints.
- `consumers(id, repo, "group", consumer_id, path, line, "column", namespace, name_server, client,
  message_model, consume_mode, service, environment, record)`: one row per consumer of a known group,
  indexed on `"group"` (the group as the broker sees it: `namespace%group` when a namespace is known).
  `environment` is the effective one (the inventory's hint where the code names none). `record` is
  the consumer as subguard's JSON (`core.model.Consumer`, default values left out): what `check`
  judges with, so that the map's members are judged exactly as in the audit.
- `subscriptions(consumer, topic, expression, expression_type, tags, path, line, "column")`: one row
  per declared subscription (`consumer` = `consumers.id`; `tags` a JSON list, in written order).
- `waivers(repo, path, line, rules, reason, record)`: the inline waivers of every repository
  (`rules` comma-separated; `record` the waiver as JSON: rules, reason, location, covers), indexed on repo.

Unknown values are NULL. Paths are POSIX and relative to the repository; lines and columns 1-based.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from subguard.audit.output import Output

FILE_NAME = "org-map.sqlite"
FORMAT = "subguard-org-map"
VERSION = 1
_MAGIC = b"SQLite format 3\x00"
_BATCH = 500  # host parameters per IN (...) query (SQLite allows 999 at least)

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE repos (repo TEXT PRIMARY KEY, "commit" TEXT, root TEXT, team TEXT, owner TEXT, environment TEXT);
CREATE TABLE consumers (
  id INTEGER PRIMARY KEY, repo TEXT NOT NULL, "group" TEXT NOT NULL, consumer_id TEXT NOT NULL, path TEXT NOT NULL,
  line INTEGER NOT NULL, "column" INTEGER NOT NULL, namespace TEXT, name_server TEXT, client TEXT NOT NULL,
  message_model TEXT, consume_mode TEXT, service TEXT, environment TEXT, record TEXT NOT NULL
);
CREATE TABLE subscriptions (
  consumer INTEGER NOT NULL, topic TEXT, expression TEXT, expression_type TEXT NOT NULL, tags TEXT NOT NULL,
  path TEXT NOT NULL, line INTEGER NOT NULL, "column" INTEGER NOT NULL
);
CREATE TABLE waivers (repo TEXT NOT NULL, path TEXT NOT NULL, line INTEGER NOT NULL, rules TEXT NOT NULL,
  reason TEXT NOT NULL, record TEXT NOT NULL);
"""
INDEXES = """
CREATE INDEX consumers_group ON consumers("group");
CREATE INDEX waivers_repo ON waivers(repo);
"""

Sub = tuple[str | None, str | None, str, str, str, int, int]  # topic, expression, type, tags JSON, path, line, column
# repo, group, consumer_id, path, line, column, namespace, name_server, client, message_model, consume_mode,
# service, environment, record JSON, subscriptions
Row = tuple[str, str, str, str, int, int, str | None, str | None, str, str | None, str | None, str, str, str, list[Sub]]
WaiverRow = tuple[str, str, int, str, str, str]  # repo, path, line, rules, reason, record JSON


class MapError(ValueError):
    """An org map that cannot be used; the message is one line naming the file and the problem."""


@dataclass(frozen=True)
class RepoRow:
    repo: str
    commit: str | None = None
    root: str = ""
    team: str = ""
    owner: str = ""
    environment: str = ""


# --- rows (in the audit's Spark tasks: plain Python) ------------------------------------------------


def consumer_row(record_json: str, env_hint: str | None) -> Row:
    """One consumer (its JSON, as the audit's tables carry it) as a map row, with the inventory's
    environment hint applied where the code names none (as the audit's group tasks judge it)."""
    from subguard.core.inventory import group_name
    from subguard.core.model import Consumer

    c = Consumer.model_validate_json(record_json)
    if env_hint and not c.environment:
        c = c.model_copy(update={"environment": env_hint})
    subs = [
        (
            s.topic.value,
            s.expression.value,
            s.expression_type.value,
            json.dumps(list(s.tags), ensure_ascii=False),
            s.location.path,
            s.location.line,
            s.location.column,
        )
        for s in c.subscriptions
    ]
    return (
        c.repo,
        group_name(c) or "",
        c.consumer_id,
        c.location.path,
        c.location.line,
        c.location.column,
        c.namespace.value if c.namespace else None,
        c.name_server.value if c.name_server else None,
        c.client.value,
        c.message_model.value,
        c.consume_mode.value,
        c.service,
        c.environment,
        c.model_dump_json(exclude_defaults=True),
        subs,
    )


def waiver_row(repo: str, payload: str) -> WaiverRow:
    """One inline waiver (the audit's waiver record payload) as a map row."""
    d = json.loads(payload)
    loc = d.get("location") or {}
    return (
        repo,
        str(loc.get("path") or ""),
        int(loc.get("line") or 1),
        ",".join(d.get("rules") or ()),
        str(d.get("reason") or ""),
        payload,
    )


# --- writing ---------------------------------------------------------------------------------------


def write(
    path: str,
    repos: Iterable[RepoRow],
    consumers: Iterable[Row],
    waivers: Iterable[WaiverRow],
    *,
    written: dt.datetime | None = None,
    sources: Sequence[str] = (),
) -> dict[str, int]:
    """Write a complete map to `path` (through `path.part`, renamed into place when complete); returns
    the row counts. The indexes are built after the rows, in one pass."""
    from subguard import __version__

    part = f"{path}.part"
    if os.path.lexists(part):
        os.unlink(part)
    conn = sqlite3.connect(part, isolation_level=None)
    counts = {"repos": 0, "consumers": 0, "subscriptions": 0, "waivers": 0}
    try:
        # a file built once and renamed into place: no journal, no fsync until the end
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA cache_size=-65536")
        conn.executescript(SCHEMA)
        conn.execute("BEGIN")
        repo_rows = [(r.repo, r.commit, r.root, r.team, r.owner, r.environment) for r in repos]
        conn.executemany("INSERT OR REPLACE INTO repos VALUES (?, ?, ?, ?, ?, ?)", repo_rows)
        counts["repos"] = len(repo_rows)
        cur = conn.cursor()
        subs: list[tuple[Any, ...]] = []
        for n, row in enumerate(consumers, 1):
            if not row[1]:
                continue
            cur.execute("INSERT INTO consumers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (n, *row[:14]))
            subs += [(n, *s) for s in row[14]]
            counts["consumers"] += 1
            if len(subs) >= 10_000:
                counts["subscriptions"] += _flush(cur, subs)
        counts["subscriptions"] += _flush(cur, subs)
        waiver_rows = list(waivers)
        cur.executemany("INSERT INTO waivers VALUES (?, ?, ?, ?, ?, ?)", waiver_rows)
        counts["waivers"] = len(waiver_rows)
        for statement in filter(str.strip, INDEXES.split(";")):
            conn.execute(statement)
        meta = {
            "format": FORMAT,
            "version": str(VERSION),
            "subguard": __version__,
            "written": (written or dt.datetime.now(dt.timezone.utc))
            .astimezone(dt.timezone.utc)
            .isoformat(timespec="seconds"),
            "sources": json.dumps(list(sources), ensure_ascii=False),
            **{k: str(v) for k, v in counts.items()},
        }
        cur.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
        conn.execute("COMMIT")
    finally:
        conn.close()
    os.replace(part, path)
    return counts


def _flush(cur: sqlite3.Cursor, subs: list[tuple[Any, ...]]) -> int:
    cur.executemany("INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?, ?, ?)", subs)
    n = len(subs)
    subs.clear()
    return n


def git_commit(root: str) -> str | None:
    """The commit checked out in a local git work tree (HEAD, through refs or packed-refs); None when
    it is not one or cannot be read. Reads three small files at most, never runs git."""
    git = Path(root) / ".git"
    try:
        if git.is_file():  # a worktree or submodule: `gitdir: PATH`
            text = git.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir:"):
                return None
            git = (Path(root) / text[7:].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _is_sha(head) else None
        ref = head[4:].strip()
        common = git / "commondir"
        base = (git / common.read_text(encoding="utf-8").strip()).resolve() if common.is_file() else git
        for folder in (git, base):
            loose = folder / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                return sha if _is_sha(sha) else None
        packed = base / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name.strip() == ref and _is_sha(sha):
                    return sha
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(ch in "0123456789abcdef" for ch in text)


def _local(uri: str) -> str | None:
    if uri.startswith("file:"):
        rest = uri[5:]
        return "/" + rest.lstrip("/") if rest.startswith("/") else None
    return None if ":" in uri.split("/", 1)[0] else uri


def write_audit(
    consumers: DataFrame,
    waivers: Iterable[tuple[str, str]],
    hints: Mapping[str, Any],
    roots: Sequence[tuple[str, str]],
    output: Output,
    sources: Sequence[str],
    progress: Callable[[str], None] = lambda text: None,
) -> None:
    """The audit's map, into its staging folder: the consumers table (`json`, `env_hint`) is turned
    into rows by Spark tasks and collected by the driver (one job), which writes the file (a local output
    directly; another file system through a local temporary file and Hadoop). `waivers`: the inline
    waiver records (repo, payload), a few per repository, already on the driver."""
    import tempfile

    known = consumers.where(consumers["group"].isNotNull() & (consumers["group"] != ""))
    # one job (a local iterator is one job per partition); a row per consumer
    rows: list[Row] = (
        known.select("json", "env_hint")
        .rdd.mapPartitions(lambda part: (consumer_row(r[0], r[1] or None) for r in part))
        .collect()
    )
    waiver_rows: Iterator[WaiverRow] = (waiver_row(repo, payload) for repo, payload in waivers)
    by_repo = dict(roots)
    names = sorted(set(by_repo) | set(hints))
    repos = []
    for name in names:
        hint = hints.get(name)
        root = by_repo.get(name, "")
        path = _local(root) if root else None
        repos.append(
            RepoRow(
                name,
                git_commit(path) if path else None,
                root,
                getattr(hint, "team", "") or "",
                getattr(hint, "owner", "") or "",
                getattr(hint, "environment", "") or "",
            )
        )
    if output.local is not None:
        counts = write(os.path.join(output.staging, FILE_NAME), repos, rows, waiver_rows, sources=sources)
    else:
        with tempfile.TemporaryDirectory(prefix="subguard-org-map-") as tmp:
            local = os.path.join(tmp, FILE_NAME)
            counts = write(local, repos, rows, waiver_rows, sources=sources)
            _upload(consumers, local, f"{output.staging}/{FILE_NAME}")
    progress(
        f"wrote {FILE_NAME}: {counts['consumers']} consumers, {counts['subscriptions']} subscriptions, "
        f"{counts['repos']} repositories"
    )


def _upload(df: DataFrame, local: str, uri: str) -> None:
    sc = df.sparkSession.sparkContext
    jvm = sc._jvm
    assert jvm is not None
    target = jvm.org.apache.hadoop.fs.Path(uri)
    fs = target.getFileSystem(sc._jsc.hadoopConfiguration())
    fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(Path(local).as_uri()), target)


# --- reading ---------------------------------------------------------------------------------------


class OrgMap:
    """An open org map (read-only). `open` checks it is a complete map this subguard can read."""

    def __init__(self, path: str, conn: sqlite3.Connection, meta: Mapping[str, str]) -> None:
        self.path = path
        self._conn = conn
        self.meta = dict(meta)
        self.version = int(meta["version"])
        self.written = _parse_time(meta.get("written", ""), path)

    @classmethod
    def open(cls, path: str) -> OrgMap:
        """The map at `path` (a map file, or an audit's output folder holding one); MapError when it
        is missing, truncated, not an org map, or written in a newer format."""
        if os.path.isdir(path):
            inner = os.path.join(path, FILE_NAME)
            if not os.path.isfile(inner):
                raise MapError(f"{path}: org map not found (a folder without {FILE_NAME})")
            path = inner
        _check_file(path)
        try:
            conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error as exc:
            raise MapError(f"{path}: cannot open the org map: {exc}") from None
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "meta" not in tables:
                raise MapError(f"{path}: not a subguard org map (a SQLite database without its meta table)")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != FORMAT:
                raise MapError(f"{path}: not a subguard org map (format {meta.get('format')!r}, expected {FORMAT!r})")
            version = meta.get("version", "")
            if not version.isdigit():
                raise MapError(f"{path}: not a subguard org map (version {version!r})")
            if int(version) > VERSION:
                raise MapError(
                    f"{path}: org map format version {version} was written by a newer subguard "
                    f"({meta.get('subguard', '?')}); this one reads up to version {VERSION}: upgrade subguard"
                )
            missing = {"repos", "consumers", "subscriptions", "waivers"} - tables
            if missing:
                raise MapError(f"{path}: not a complete org map (no table {sorted(missing)[0]})")
            return cls(path, conn, meta)
        except sqlite3.Error as exc:
            conn.close()
            raise MapError(f"{path}: unreadable org map ({exc})") from None
        except MapError:
            conn.close()
            raise

    def close(self) -> None:
        self._conn.close()

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        try:
            return self._conn.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as exc:
            raise MapError(f"{self.path}: unreadable org map ({exc})") from None

    def repos(self) -> dict[str, RepoRow]:
        rows = self._query('SELECT repo, "commit", root, team, owner, environment FROM repos')
        return {r[0]: RepoRow(r[0], r[1], r[2] or "", r[3] or "", r[4] or "", r[5] or "") for r in rows}

    def members(self, groups: Iterable[str]) -> list[tuple[str, str, str, int, str]]:
        """(repo, group, path, line, record JSON) of every consumer of these groups, in the map's order."""
        out: list[tuple[str, str, str, int, str]] = []
        wanted = sorted(set(groups))
        for i in range(0, len(wanted), _BATCH):
            part = wanted[i : i + _BATCH]
            marks = ", ".join("?" * len(part))
            out += self._query(
                f'SELECT repo, "group", path, line, record FROM consumers WHERE "group" IN ({marks}) ORDER BY id', part
            )
        return out

    def waivers(self, repos: Iterable[str]) -> list[tuple[str, str]]:
        """(repo, record JSON) of the inline waivers of these repositories."""
        out: list[tuple[str, str]] = []
        wanted = sorted(set(repos))
        for i in range(0, len(wanted), _BATCH):
            part = wanted[i : i + _BATCH]
            marks = ", ".join("?" * len(part))
            out += self._query(f"SELECT repo, record FROM waivers WHERE repo IN ({marks}) ORDER BY rowid", part)
        return out

    def age_days(self, today: dt.date | None = None) -> int:
        """Whole days between the day the map was written and today (UTC calendar days: the same all day)."""
        now = today or dt.datetime.now(dt.timezone.utc).date()
        return (now - self.written.astimezone(dt.timezone.utc).date()).days

    @property
    def date(self) -> str:
        return self.written.astimezone(dt.timezone.utc).date().isoformat()


def _parse_time(text: str, path: str) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise MapError(f"{path}: not a complete org map (written {text!r} is not a time)") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def _check_file(path: str) -> None:
    """Missing, empty, foreign or truncated, from the file's size and its SQLite header alone."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(100)
    except FileNotFoundError:
        raise MapError(f"{path}: org map not found") from None
    except OSError as exc:
        raise MapError(f"{path}: cannot read the org map: {exc.strerror or exc}") from None
    if size == 0:
        raise MapError(f"{path}: org map is empty (0 bytes): truncated or never written")
    if not head.startswith(_MAGIC[: len(head)]) or (len(head) >= len(_MAGIC) and not head.startswith(_MAGIC)):
        raise MapError(f"{path}: not a subguard org map (not a SQLite database; `subguard audit` writes {FILE_NAME})")
    if len(head) < 100:
        raise MapError(f"{path}: org map is truncated ({size} bytes, shorter than its header)")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    counter, pages = struct.unpack(">II", head[24:32])
    valid_for = struct.unpack(">I", head[92:96])[0]
    if pages and counter == valid_for and size < pages * page_size:
        raise MapError(f"{path}: org map is truncated ({size} of {pages * page_size} bytes)")
