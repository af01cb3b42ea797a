"""What reading a cached set-up costs, in the entry format before issue 31's last two cache
changes and after them (harness/execution/setup_cache.py).

    python bench/setup_cache_read.py [--targets tau2-retail,tau2-telecom] [--limit 2]

Draws `--limit` mutants a target (the open-world plan of `bench/throughput.py`, with the
recorded calls) in a throwaway project, runs it once with 1 worker so that the set-up cache
holds its liveness observations, then times reading every observations entry three ways
(best of 3 each, in this process):

- **whole, re-encoded**: one JSON document holding the whole observations, its digest
  checked by encoding the parsed value again (the entry format before);
- **whole, hashed as read**: the same observations on a line of their own, the digest taken
  of the bytes read;
- **by parts** (the format now): the states written by their distinct parts, each record
  shared with the fresh environment as a reference to it, hashed as read, parsed and
  decoded (`SetupCache.get` with the decoder runs use, linked to the fresh records).

The first two files are built here from the entries' values, equal to what the earlier
formats wrote. Prints the bytes and seconds of each and the load average; writes
results/bench/setup-cache-read-<date>.json and .md. Runs under PYTHONHASHSEED=0 unless a
seed is set, as `harness` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from common import add_output_options, load, output_stem, today
from throughput import bench_project

from harness.execution.pair_scoring import STATE_FIELDS, Pristine, _observations, _pristine
from harness.execution.setup_cache import FOLDER, SetupCache, _canonical, unshared
from harness.targets.registry import load_target


def best(function: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="tau2-retail,tau2-telecom")
    parser.add_argument("--limit", type=int, default=2, help="mutants a target (seeded)")
    parser.add_argument("--seed", type=int, default=20261130)
    add_output_options(parser)
    args = parser.parse_args()
    out = output_stem(f"setup-cache-read-{today()}", args)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    targets = args.targets.split(",")
    report: dict[str, Any] = {"date": today(), "targets": targets, "limit": args.limit}
    with tempfile.TemporaryDirectory(prefix="setup-cache-read-") as tmp:
        folder = Path(tmp)
        plan_path, corpus = bench_project(
            folder / "project", targets, 1, args.limit, args.seed, recorded=True
        )
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", str(plan_path), "--workers", "1"],
            cwd=folder / "project",
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"harness run failed: {done.stderr[-2000:]}")
        (cache_folder,) = (folder / "project" / "results" / FOLDER).iterdir()
        entries = sorted(cache_folder.glob("observations-*.json"))
        cache = SetupCache(cache_folder, cache_folder.name)
        known: dict[str, Pristine] = {}  # each target's fresh records, as a run reads them
        sizes = {"whole": 0, "by_parts": 0}
        seconds = {"whole_reencoded": 0.0, "whole_hashed_as_read": 0.0, "by_parts": 0.0}
        print(f"{len(corpus.pairs)} pairs of {', '.join(targets)}; load {load()}", flush=True)
        for path in entries:
            data = path.read_bytes()
            head, _, body = data.partition(b"\n")
            key = json.loads(head)["key"]
            value = json.loads(body)
            fresh = _pristine(known, load_target(key["target"]))
            whole = unshared(value, STATE_FIELDS, fresh.records)
            encoded = _canonical(whole)
            digest = hashlib.sha256(encoded).hexdigest()
            old = _canonical({"key": key, "sha256": digest, "value": whole}) + b"\n"
            line = _canonical({"key": key, "sha256": digest}) + b"\n" + encoded + b"\n"
            sizes["whole"] += len(encoded)
            sizes["by_parts"] += len(body)

            def reencoded(old: bytes = old) -> None:
                entry = json.loads(old)
                assert hashlib.sha256(_canonical(entry["value"])).hexdigest() == entry["sha256"]

            def hashed_as_read(line: bytes = line) -> None:
                first, _, rest = line.partition(b"\n")
                rest = rest.removesuffix(b"\n")
                assert hashlib.sha256(rest).hexdigest() == json.loads(first)["sha256"]
                json.loads(rest)

            parts = {k: v for k, v in key.items() if k not in ("schema", "freeze_id", "kind")}

            def by_parts(
                parts: dict[str, Any] = parts, whole: Any = whole, fresh: Pristine = fresh
            ) -> None:
                decode = partial(_observations, fresh=fresh)
                assert cache.get("observations", parts, decode) == whole

            seconds["whole_reencoded"] += best(reencoded)
            seconds["whole_hashed_as_read"] += best(hashed_as_read)
            seconds["by_parts"] += best(by_parts)
        report |= {
            "pairs": len(corpus.pairs),
            "entries": len(entries),
            "megabytes": {k: round(v / 1e6, 1) for k, v in sizes.items()},
            "seconds": {k: round(v, 3) for k, v in seconds.items()},
            "load": load(),
        }
    lines = [
        f"# Reading a cached set-up's observations ({report['date']})",
        "",
        f"`python bench/setup_cache_read.py --targets {args.targets} --limit {args.limit}`: "
        f"{report['pairs']} pairs, {report['entries']} observations entries, best of 3 each, "
        f"load {report['load']} on {os.cpu_count()} CPUs.",
        "",
        "| format | MB | seconds |",
        "| --- | ---: | ---: |",
        f"| whole, digest re-encoded (before) | {report['megabytes']['whole']} | "
        f"{report['seconds']['whole_reencoded']} |",
        f"| whole, digest of the bytes read | {report['megabytes']['whole']} | "
        f"{report['seconds']['whole_hashed_as_read']} |",
        f"| by parts, digest of the bytes read (now) | {report['megabytes']['by_parts']} | "
        f"{report['seconds']['by_parts']} |",
    ]
    print("\n".join(lines[4:]))
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(report, indent=1) + "\n")
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
