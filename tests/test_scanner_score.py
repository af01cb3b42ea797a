"""The static scanner scored against the committed ledger of confirmed AgentDojo defect sites,
and the scoring rule on hand-made flags."""

from __future__ import annotations

import json
from pathlib import Path

from test_runner import harness

from harness.analysis.scanner_score import ConfirmedSite, score_target
from harness.checker.verdicts import DefectClass
from harness.contracts.model import Tier
from harness.scanner import ScanCheck, ScanFlag, scan_target
from harness.targets.registry import load_target

REPO = Path(__file__).resolve().parents[1]
SITES = REPO / "sites" / "agentdojo.yaml"


def site(line: int, end_line: int | None = None, tier: Tier = Tier.AGENT_VISIBLE) -> ConfirmedSite:
    return ConfirmedSite(
        id=f"s{line}",
        target="t",
        tool="tool",
        file="m.py",
        function="tool",
        line=line,
        end_line=end_line,
        defect_class=DefectClass.IGNORED_ARGUMENT,
        tier=tier,
        clauses=["arg.x"],
        witness="w",
        reading="r",
    )


def flag(line: int, file: str = "m.py") -> ScanFlag:
    return ScanFlag(
        check=ScanCheck.UNUSED_PARAMETER,
        file=file,
        function="tool",
        line=line,
        class_hint=DefectClass.IGNORED_ARGUMENT,
        message=f"flag at {line}",
    )


def test_a_flag_counts_on_a_site_only_inside_its_span_and_file():
    sites = [site(10, 12), site(20, tier=Tier.INFERRED), site(30)]
    score = score_target("t", sites, [flag(12), flag(13), flag(20, file="other.py"), flag(30)])
    assert (score.sites, score.sites_flagged) == (3, 2)
    assert (score.agent_visible_sites, score.agent_visible_flagged) == (2, 2)
    assert (score.flags_on_sites, score.flags_elsewhere) == (2, 2)
    assert score.missed_site_ids == ["s20"]
    assert score.elsewhere == ["m.py:13 tool unused_parameter", "other.py:20 tool unused_parameter"]


def test_scan_score_on_the_agentdojo_ledger():
    done = harness("scan", "--score", str(SITES), "--json", cwd=REPO)
    assert done.returncode == 0, done.stderr
    scores = {s["target"]: s for s in json.loads(done.stdout)}
    assert {t: (s["sites_flagged"], s["sites"]) for t, s in scores.items()} == {
        "agentdojo-banking": (9, 9),
        "agentdojo-slack": (1, 2),
        "agentdojo-travel": (1, 5),
        "agentdojo-workspace": (0, 4),
    }
    assert sum(s["agent_visible_flagged"] for s in scores.values()) == 3
    assert sum(s["agent_visible_sites"] for s in scores.values()) == 8
    assert scores["agentdojo-slack"]["elsewhere"] == [
        "agentdojo/default_suites/v1/tools/slack.py:30 add_user_to_channel verb_pair_asymmetry",
        "agentdojo/default_suites/v1/tools/web.py:47 download_file unused_parameter",
    ]
    # the two new checks find the two agent-visible sites the old five missed
    assert (
        "slack.invite_user_to_slack.user_email_unused"
        in (scores["agentdojo-slack"]["flagged_site_ids"])
    )
    table = harness("scan", "agentdojo-travel", "--score", str(SITES), cwd=REPO)
    assert table.returncode == 0, table.stderr
    assert "flags 1 of 5 confirmed sites (1 of 2 agent-visible)" in table.stdout


def test_new_checks_on_the_unmutated_tools():
    counts = {}
    for name in ("toy_domain", "agentdojo-banking", "agentdojo-slack", "agentdojo-travel"):
        flags = scan_target(load_target(name))
        counts[name] = tuple(
            sum(1 for f in flags if f.check is check)
            for check in (ScanCheck.OPTIONAL_BOOL_TRUTHINESS, ScanCheck.UNUSED_PARAMETER)
        )
    assert counts == {
        "toy_domain": (0, 0),
        "agentdojo-banking": (1, 0),
        "agentdojo-slack": (0, 2),
        "agentdojo-travel": (0, 0),
    }


def test_a_bad_site_ledger_is_one_line_per_problem(tmp_path):
    bad = tmp_path / "sites.yaml"
    text = SITES.read_text().replace("line: 144", "line: 99999", 1)
    bad.write_text(text.replace("tool: invite_user_to_slack", "tool: invite_nobody", 1))
    done = harness("scan", "--score", str(bad), cwd=REPO)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in done.stderr
    assert "recurring_false_ignored" in lines[0] and "past the end" in lines[0]
    assert "tool invite_nobody is not a tool of agentdojo-slack" in lines[1]
    missing = harness("scan", cwd=REPO)
    assert missing.returncode == 2 and "no target given" in missing.stderr
