"""Mutation-site indexing: how many modules of the target's package are parsed to find the
functions each tool's call reaches, how long that takes, and how many sites it finds.

    python bench/site_index.py [--targets toy_domain agentdojo-banking ...]

Per target, in a fresh process state (caches cleared): `tool_sites` for every tool, timed
once; prints modules parsed, modules in the package, sites found (summed over tools) and
seconds. The machine is shared: compare numbers of one sitting only.
"""

from __future__ import annotations

import argparse
import time

from harness.mutation import sites
from harness.mutation.sites import index as site_index  # the private caches live here
from harness.targets.registry import load_target

DEFAULT = [
    "toy_domain",
    "agentdojo-banking",
    "agentdojo-slack",
    "agentdojo-travel",
    "agentdojo-workspace",
]


def measure(name: str) -> dict[str, float | int | str]:
    target = load_target(name)
    adapter = target.adapter
    site_index._package.cache_clear()
    site_index._VIEWS.clear()
    index_cache = getattr(site_index, "_index_module_cached", None)
    if index_cache is not None:
        index_cache.cache_clear()
    started = time.perf_counter()
    found = sum(len(sites.tool_sites(adapter, tool)) for tool in adapter.tool_names())
    seconds = time.perf_counter() - started
    parsed = {m for view in sites.package_views() for m in view.modules}
    package = adapter.tool_function(adapter.tool_names()[0]).__module__.partition(".")[0]
    total = sum(1 for _ in site_index._package_files(package))
    return {
        "target": name,
        "parsed": len(parsed),
        "package_modules": total,
        "sites": found,
        "seconds": round(seconds, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    print("target | modules parsed | modules in package | sites (all tools) | seconds")
    for name in args.targets:
        row = measure(name)
        print(
            " | ".join(
                str(row[k]) for k in ("target", "parsed", "package_modules", "sites", "seconds")
            )
        )


if __name__ == "__main__":
    main()
