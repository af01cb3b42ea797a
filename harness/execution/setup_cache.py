"""Set-up once per freeze: what a run prepares on the ORIGINAL tools before its first row
(baseline verdicts, liveness observations, grader verdicts and, with coverage-guided
scoring, the coverage records, evaluation fingerprints and each pair's reuse), kept by
content under
`results/.setup-cache/<freeze id>/`, so a rerun, a resume or `--checker` on the same freeze
skips it.

Why by freeze id: the freeze hashes everything the original's outcomes depend on (the
target's whole package and data, the contracts, the checker's scope, the drawn corpus with
its liveness calls, the harness code that scores pairs, the package versions), and a run
starts only after verifying it (a post-hoc run's id is that of its current inputs). Each
entry's key adds what else it depends on: the kind, the target, the tool or task, the
liveness calls themselves, and the checker for what the checker computed (baselines and
coverage records, which include the checker's run, and the reuse that follows from them:
one entry per tool, keyed by the tool and the SHA-256 of the records it follows from,
holding each of the tool's pairs in the run that stored it). One file per entry, named by the
SHA-256 of its key and written whole (`atomic.write_bytes`): a first line of JSON holding
the key and the SHA-256 of the value's bytes, and a second holding the value as canonical
JSON (sorted keys, no spaces), so the digest is checked on the bytes read instead of on the
value encoded again (encoding it again was a quarter of the time tau2's observations took
to read: 3.53 s against 2.65 s, bench/setup_cache_read.py).

Liveness observations are written by their states' parts (`shared`): tau2's states repeat
the same records after every call, and writing each distinct part once made two tau2
tools' entries 4.2 MB instead of 50.1 MB, read in 0.44 s instead of 3.53 s
(bench/setup_cache_read.py, results/bench/setup-cache-read-2026-12-04.md).
A record a state shares with the target's fresh environment (tau2's untouched records, the
very objects of a fresh snapshot) is written as a reference to it, and read back as the
fresh snapshot's own object, with no comparison: the entry's key holds the fresh
snapshot's digest (`pair_scoring`), so a reference is only read against the environment it
was written from.

Verified, not trusted: an entry is used only when its first line parses and holds the key
asked for, its value's bytes hash to the digest stored there, and the value parses and
decodes; otherwise it is recomputed, rewritten, and a line on stderr says which and why. A
value that JSON does not give back equal (a tuple, a non-string key) is never stored, so it
is recomputed on every run rather than read back changed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from harness.execution.atomic import write_bytes

SETUP_CACHE_SCHEMA_VERSION = 3  # 2: the value on a line of its own, hashed as read;
# 3: a record shared with the fresh environment written as a reference to it
FOLDER = ".setup-cache"  # under results/: ignored by git with every other local run folder
T = TypeVar("T")


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


@dataclass
class SetupCache:
    """The set-up entries of one freeze; `hits`, `stored` and `rejected` count what a run
    took, wrote and refused (by kind), `computed` what it computed and `from_run_folder`
    what it took from the run folder's own baseline.json and coverage.json (a resume), so a
    caller can tell what ran (run.json's `setup`)."""

    folder: Path  # results/.setup-cache/<freeze id>
    freeze_id: str
    hits: dict[str, int] = field(default_factory=dict)
    stored: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    computed: dict[str, int] = field(default_factory=dict)
    from_run_folder: dict[str, int] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)  # the files `put` wrote
    # what this run's helper processes wrote (`setup_helpers`): read back, counted computed
    fresh: set[str] = field(default_factory=set)
    helpers: int = 0

    def tally(self, counts: dict[str, int], kind: str) -> None:
        counts[kind] = counts.get(kind, 0) + 1

    def summary(self) -> dict[str, Any]:
        """What this run's set-up took from where (run.json's `setup`), kinds sorted."""
        return {
            "cache": f"results/{FOLDER}/{self.freeze_id}",
            "from_cache": dict(sorted(self.hits.items())),
            "from_run_folder": dict(sorted(self.from_run_folder.items())),
            "computed": dict(sorted(self.computed.items())),
            "stored": dict(sorted(self.stored.items())),
            "refused": dict(sorted(self.rejected.items())),
            "helpers": self.helpers,
        }

    def adopt(
        self, helpers: int, stored: dict[str, int], refused: dict[str, int], written: set[str]
    ) -> None:
        """Count what `helpers` processes stored and refused for this run; the entries
        they wrote are counted `computed` when read."""
        self.helpers, self.fresh = helpers, set(written)
        for counts, theirs in ((self.stored, stored), (self.rejected, refused)):
            for kind, n in theirs.items():
                counts[kind] = counts.get(kind, 0) + n

    @classmethod
    def for_run(cls, root: Path, freeze_id: str) -> SetupCache:
        return cls(root / "results" / FOLDER / freeze_id, freeze_id)

    def _key(self, kind: str, parts: dict[str, Any]) -> dict[str, Any]:
        head = {"schema": SETUP_CACHE_SCHEMA_VERSION, "freeze_id": self.freeze_id, "kind": kind}
        return head | parts

    def path(self, kind: str, parts: dict[str, Any]) -> Path:
        digest = hashlib.sha256(_canonical(self._key(kind, parts))).hexdigest()
        return self.folder / f"{kind}-{digest[:40]}.json"

    def get(
        self,
        kind: str,
        parts: dict[str, Any],
        decode: Callable[[Any], T],
        serves: Callable[[T], bool] | None = None,
    ) -> T | None:
        """The verified entry decoded, or None (absent, or refused with a line on stderr, or
        sound but not one that `serves` the caller: a coverage record narrower than the
        pairs need, neither taken nor refused, so counted nowhere)."""
        path = self.path(kind, parts)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._refuse(kind, path, f"unreadable ({exc.strerror})")
        head, _, body = data.partition(b"\n")
        body = body.removesuffix(b"\n")  # canonical JSON holds no raw line break
        try:
            entry = json.loads(head)
            if not isinstance(entry, dict) or entry.get("key") != self._key(kind, parts):
                return self._refuse(kind, path, "holds another key")
            if hashlib.sha256(body).hexdigest() != entry.get("sha256"):
                return self._refuse(kind, path, "its value does not match its digest")
            value = decode(json.loads(body))
        except Exception as exc:  # not JSON, no value, or a value that no longer decodes
            return self._refuse(kind, path, f"does not decode ({type(exc).__name__})")
        if serves is not None and not serves(value):
            return None
        self.tally(self.computed if str(path) in self.fresh else self.hits, kind)
        return value

    def put(self, kind: str, parts: dict[str, Any], value: Any) -> None:
        """Store `value` (JSON) under the key, unless JSON would not give it back equal."""
        try:
            encoded = _canonical(value)
        except (TypeError, ValueError):
            return
        if json.loads(encoded) != value:
            return
        entry = {"key": self._key(kind, parts), "sha256": hashlib.sha256(encoded).hexdigest()}
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path(kind, parts)
        write_bytes(path, _canonical(entry) + b"\n" + encoded + b"\n")
        self.written.append(str(path))
        self.tally(self.stored, kind)

    def _refuse(self, kind: str, path: Path, why: str) -> None:
        self.tally(self.rejected, kind)
        print(f"set-up cache: {path}: {why}; recomputed", file=sys.stderr)
        return None


def content_digest(value: Any) -> str:
    """The SHA-256 of `value` as canonical JSON: a key's part for a large input (a tool's
    liveness calls, the coverage record a pair's reuse follows from)."""
    return hashlib.sha256(_canonical(value)).hexdigest()


# A state's parts down to this depth are written as references to a table of distinct
# parts: tau2's liveness observations repeat the same records in every state after every
# call (two tau2 tools' 50 MB of states hold 1.4 MB of distinct parts at depth 2).
SHARED_DEPTH = 2


Record = tuple[str, ...]  # where a state's record is, at depth SHARED_DEPTH: (table, key)


def shared(
    items: list[dict[str, Any]],
    fields: tuple[str, ...],
    fresh: Mapping[Record, Any] | None = None,
) -> dict[str, Any]:
    """`items` for the cache with each value of `fields` written as its parts: a dict
    above `SHARED_DEPTH` as {"d": {key: part}}, a record that is the very object `fresh`
    holds at its (table, key) as {"f": 1}, anything else as {"s": index} into "parts",
    where each distinct value is written once. Distinct means unequal in Python, not only
    in canonical JSON: a tuple and an equal list, or {1: x} and {"1": x}, stay two parts,
    so `SetupCache.put` sees the one JSON would change and refuses the entry. Raises
    TypeError or ValueError on a part that is not JSON (NaN, a set), as `_canonical` does."""
    index: dict[bytes, int] = {}
    parts: list[Any] = []
    # one object met again (tau2's states share their untouched records) is the same part:
    # its JSON is not written out again to find it (by id, while `items` holds every node)
    placed: dict[int, int] = {}

    def part(node: Any, path: Record) -> dict[str, Any]:
        if len(path) < SHARED_DEPTH and isinstance(node, dict):
            return {"d": {key: part(value, (*path, key)) for key, value in node.items()}}
        if fresh is not None and len(path) == SHARED_DEPTH and fresh.get(path) is node:
            return {"f": 1}
        at = placed.get(id(node))
        if at is None:
            key = _canonical(node)
            at = index.get(key)
            if at is None or parts[at] != node:
                at = len(parts)
                parts.append(node)
                index.setdefault(key, at)
            placed[id(node)] = at
        return {"s": at}

    written = [item | {name: part(item[name], ()) for name in fields} for item in items]
    return {"parts": parts, "items": written}


def unshared(
    value: Any,
    fields: tuple[str, ...],
    fresh: Mapping[Record, Any] | None = None,
    link: Callable[[Record, Any], Any] | None = None,
) -> list[dict[str, Any]]:
    """The items `shared` wrote, each repeated part one object shared by every item that
    holds it (read only, like every observation); a reference {"f": 1} the record `fresh`
    holds at its (table, key); each other record at that depth `link((table, key), part)`
    when given, once for each part at each (table, key). A malformed value, or a reference
    to a record `fresh` lacks, raises ValueError."""
    parts = value["parts"]
    linked: dict[tuple[Record, int], Any] = {}

    def whole(node: dict[str, Any], path: Record) -> Any:
        if set(node) == {"d"}:
            return {key: whole(part, (*path, key)) for key, part in node["d"].items()}
        if set(node) == {"s"} and type(node["s"]) is int and node["s"] >= 0:
            if link is None or len(path) != SHARED_DEPTH:
                return parts[node["s"]]
            at = (path, node["s"])
            if at not in linked:
                linked[at] = link(path, parts[node["s"]])
            return linked[at]
        if set(node) == {"f"} and type(node["f"]) is int and node["f"] == 1:
            if len(path) != SHARED_DEPTH or fresh is None:
                raise ValueError(f"a reference to a fresh record where none can be: {path}")
            if path in fresh:
                return fresh[path]
            raise ValueError(f"a reference to a record the fresh environment lacks: {path}")
        raise ValueError(f"not a shared part: {sorted(node)}")

    return [item | {name: whole(item[name], ()) for name in fields} for item in value["items"]]
