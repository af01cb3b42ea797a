"""One AgentDojo suite loaded once per process: its tools, pristine environment and runtime.

Shared by the adapter and the grader replay, so that neither imports the other for it.
"""

from __future__ import annotations

import importlib.util
import pickle
import sys
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

# AgentDojo's agent pipeline package: its __init__ imports every LLM client (anthropic,
# openai, google-genai, cohere), which takes longer than the rest of a suite's loading
# together. A suite needs three of its modules and, of those clients, only google-genai
# (its ground-truth pipeline's tool execution imports AgentDojo's Google client module).
PIPELINE = "agentdojo.agent_pipeline"


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
    pipeline_on_first_read()
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


def pipeline_on_first_read() -> None:
    """Make `agentdojo.agent_pipeline` a package whose `__init__` runs when one of its names
    is first read, not when a module of it is imported (`PIPELINE`).

    Its modules import as they would (the package has its `__path__`), and the first read
    of a name the package itself defines (`agentdojo.agent_pipeline.AgentPipeline`, `from
    agentdojo.agent_pipeline import OpenAILLM`, an unpickled reference) runs the real
    `__init__` in it, once, before answering. No file changes; a process that imported the
    package already keeps it as it is (looked for after `agentdojo` is imported, in case its
    own `__init__` imports the package). A suite's tools, environments and graders read none
    of those names, so a run loads neither anthropic, openai nor cohere; google-genai it
    still loads, through the ground-truth pipeline's tool execution."""
    import agentdojo

    if PIPELINE in sys.modules:
        return

    spec = importlib.util.find_spec(PIPELINE)
    if spec is None or spec.loader is None:  # an agentdojo without it: import as it is
        return
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)
    lock = threading.Lock()

    def __getattr__(name: str) -> Any:
        with lock:
            if package.__dict__.get("__getattr__") is __getattr__:
                del package.__dict__["__getattr__"]
                loader.exec_module(package)
        return getattr(package, name)  # a name the __init__ does not define: AttributeError

    package.__dict__["__getattr__"] = __getattr__
    sys.modules[PIPELINE] = package
    agentdojo.agent_pipeline = package  # type: ignore[attr-defined]  # as an import sets it
