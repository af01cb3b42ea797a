"""Tiers of baseline findings and headline eligibility, on AgentDojo's shipped tools through
the CLI: a finding counts for the headline only when a violated clause is agent-visible."""

from __future__ import annotations

import json

from test_runner import harness


def test_headline_eligibility_follows_the_violated_clauses_tiers(tmp_path):
    out = tmp_path / "baseline"
    done = harness(
        "baseline", "agentdojo-banking", "agentdojo-travel", "--out", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    rows = {r["tool"]: r for r in map(json.loads, (out / "tools.jsonl").read_text().splitlines())}
    tiers = {
        tool: {v["clause_id"]: v["tier"] for v in row["violations"]} for tool, row in rows.items()
    }
    # "(optional)" gives an empty string no meaning: only the inferred half is violated
    assert tiers["update_user_info"] == {
        f"eff.{name}_empty": "inferred" for name in ("first_name", "last_name", "street", "city")
    }
    assert not rows["update_user_info"]["headline_eligible"]
    # False means "not recurring": the recurring clauses stay agent-visible
    assert tiers["update_scheduled_transaction"]["eff.recurring"] == "agent_visible"
    assert tiers["update_scheduled_transaction"]["eff.amount_empty"] == "inferred"
    assert rows["update_scheduled_transaction"]["headline_eligible"]
    # refused, but the state changed: only the unsourced "refusal changes nothing" is broken
    assert tiers["reserve_hotel"] == {
        "pre.start_day_format": "inferred",
        "pre.end_day_format": "inferred",
    }
    assert not rows["reserve_hotel"]["headline_eligible"]
    # accepted although not ISO: the docstring's format promise itself
    assert tiers["reserve_car_rental"]["pre.end_time_format"] == "agent_visible"
    summary = (out / "SUMMARY.md").read_text()
    assert "Headline: 3 tools with a headline-eligible finding" in summary
    assert "| agentdojo-banking | `update_user_info` | VIOLATES | — |" in summary
    assert "3 with a headline-eligible finding" in done.stdout
