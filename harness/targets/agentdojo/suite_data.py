"""One AgentDojo suite loaded once per process: its tools, pristine environment and runtime.

Shared by the adapter and the grader replay, so that neither imports the other for it.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass
class LoadedSuite:
    """One loaded suite: its tools (the registered Function objects), the pristine default
    environment (never handed out) and one runtime to run the tools through."""

    suite: Any  # agentdojo.task_suite.task_suite.TaskSuite
    functions: dict[str, Any]  # tool name -> agentdojo.functions_runtime.Function
    default_env: Any  # agentdojo.functions_runtime.TaskEnvironment
    pristine: bytes  # default_env pickled: a fresh environment is one `pickle.loads` of it
    runtime: Any  # agentdojo.functions_runtime.FunctionsRuntime
    depends: type  # agentdojo.functions_runtime.Depends


@cache
def load_suite(suite: str, version: str) -> LoadedSuite:
    """Import agentdojo and load `suite` of benchmark `version`: once per process."""
    # Through load_suites: importing a suite's task_suite module first is a circular import.
    from agentdojo.functions_runtime import Depends, FunctionsRuntime
    from agentdojo.task_suite.load_suites import get_suites

    from harness.targets.agentdojo.clock import fix_clock

    fix_clock()  # before anything is loaded or stamped: no row may carry the time of its run
    suites = get_suites(version)
    if suite not in suites:
        raise ValueError(
            f"agentdojo has no suite {suite!r} in benchmark version {version!r}; "
            f"known: {', '.join(sorted(suites)) or 'none (unknown version)'}"
        )
    task_suite = suites[suite]
    functions = {function.name: function for function in task_suite.tools}
    default_env = task_suite.load_and_inject_default_environment({})
    return LoadedSuite(
        suite=task_suite,
        functions=functions,
        default_env=default_env,
        pristine=pickle.dumps(default_env, protocol=pickle.HIGHEST_PROTOCOL),
        runtime=FunctionsRuntime(list(functions.values())),
        depends=Depends,
    )
