"""Telecom's agent and user tools share one world (the user's device and the line the agent
manages): after every call the port's own `Environment.sync_tools` carries each side's
changes to the other. Below both the adapter and the grader, which each call tools."""

from __future__ import annotations

from typing import Any


def telecom_sync(env: Any) -> None:
    """Run the port's `sync_tools` on `env`'s agent and user tool instances."""
    from inspect_evals.tau2.telecom.environment import Environment

    holder = Environment.__new__(Environment)
    holder.tools = env.instances["agent"]
    holder.user_tools = env.instances["user"]
    holder.sync_tools()
