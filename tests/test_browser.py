"""report.html and the mutation-testing-elements viewer, opened in a real browser: Debian's
headless chromium, driven through its chromedriver with selenium. The tests read the
rendered page and check what it shows against the ledger. They skip only where chromium
and chromedriver are not installed (.ci/run installs both, as it installs pdflatex)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.analysis import load_ledger, report

ROOT = Path(__file__).resolve().parent.parent
CLOSED = ROOT / "results" / "reference" / "closed_world" / "1150b599761a06f8"
VIEWER = "mutation-testing-elements@3.9.0"  # the npm package of Stryker's HTML viewer
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1100",
)
# Every element below `root`, shadow roots included (the viewer is made of web components).
ALL_ELEMENTS = """
function all(node, out) {
  if (node.shadowRoot) all(node.shadowRoot, out);
  for (const child of node.children || []) { out.push(child); all(child, out); }
  return out;
}
"""

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="chromium and chromium-driver are not installed (apt-get install chromium "
    "chromium-driver)",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def closed_report(tmp_path_factory) -> Path:
    return report(CLOSED, tmp_path_factory.mktemp("report")).out_dir


def _shown(driver) -> list[object]:
    return [r for r in driver.find_elements("css selector", "tr.pair") if r.is_displayed()]


def _text(driver, element_id: str) -> str:
    return driver.find_element("id", element_id).text


def test_report_html_shows_the_ledger_counts_and_filters(browser, closed_report) -> None:
    from selenium.webdriver.support.ui import Select

    frame = load_ledger(CLOSED)
    browser.get((closed_report / "report.html").as_uri())
    assert int(_text(browser, "count-pairs")) == len(frame)
    for status, n in frame["status"].astype(str).value_counts().items():
        assert int(_text(browser, f"count-{status}")) == n, status
    assert int(_text(browser, "shown")) == len(frame) == len(_shown(browser))
    # Survivors first: the first rows are the defect arms' misses, escapes before the rest.
    rows = _shown(browser)
    survivors = int(
        (
            frame["arm_kind"].isin(["closed_world", "open_world"]) & (frame["status"] == "missed")
        ).sum()
    )
    assert int(_text(browser, "count-survivors")) == survivors > 0
    assert all("survivor" in r.get_attribute("class").split() for r in rows[:survivors])
    assert "survivor" not in rows[survivors].get_attribute("class").split()
    escapes = int(frame["escape"].sum())
    assert all("(escape)" in r.text for r in rows[:escapes])
    missed = int((frame["status"] == "missed").sum())
    # The headline tables and the forest plot are on the page, the plot inlined and drawn.
    assert browser.find_element("id", "table-closed_world_recall").is_displayed()
    image = browser.find_element("css selector", "img.forest")
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    assert browser.execute_script("return arguments[0].naturalWidth", image) > 0
    # Nothing was fetched: no resource left the file.
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert all(not name.startswith(("http:", "https:")) for name in fetched), fetched
    # Filters: each select narrows the rows to what the ledger has.
    tool = frame.loc[frame["status"] == "missed", "tool"].astype(str).iloc[0]
    Select(browser.find_element("name", "status")).select_by_value("missed")
    assert int(_text(browser, "shown")) == missed == len(_shown(browser))
    Select(browser.find_element("name", "tool")).select_by_value(tool)
    both = int(((frame["status"] == "missed") & (frame["tool"] == tool)).sum())
    assert int(_text(browser, "shown")) == both == len(_shown(browser))
    Select(browser.find_element("name", "status")).select_by_value("")
    Select(browser.find_element("name", "tool")).select_by_value("")
    Select(browser.find_element("name", "arm_kind")).select_by_value("closed_world")
    kind = int((frame["arm_kind"] == "closed_world").sum())
    assert int(_text(browser, "shown")) == kind == len(_shown(browser))
    arm = str(frame.loc[frame["arm_kind"] == "closed_world", "arm"].iloc[-1])
    Select(browser.find_element("name", "arm")).select_by_value(arm)
    expected = int((frame["arm"] == arm).sum())
    assert int(_text(browser, "shown")) == expected == len(_shown(browser))
    # A survivor's row carries its miss cause and its diff.
    Select(browser.find_element("name", "arm")).select_by_value("")
    Select(browser.find_element("name", "status")).select_by_value("missed")
    assert int(_text(browser, "shown")) == survivors == len(_shown(browser))
    first = _shown(browser)[0]
    survivor = frame[frame["pair_id"] == first.find_element("css selector", "code").text]
    assert str(survivor["miss_cause"].iloc[0]) in first.text
    assert first.find_element("css selector", "pre.diff").get_attribute("textContent")


@pytest.fixture(scope="module")
def viewer_js(tmp_path_factory) -> str:
    """The viewer's bundled script, from its npm package (npm pack, no install)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to fetch the mutation-testing-elements viewer")
    folder = tmp_path_factory.mktemp("viewer")
    packed = subprocess.run(
        [npm, "pack", VIEWER, "--silent", "--pack-destination", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    with tarfile.open(folder / packed.stdout.strip().splitlines()[-1]) as archive:
        member = archive.extractfile("package/dist/mutation-test-elements.js")
        assert member is not None
        return member.read().decode("utf-8")


def test_the_viewer_shows_the_real_change_of_the_survivor(
    browser, closed_report, viewer_js, tmp_path
) -> None:
    payload = (closed_report / "mutation-report.json").read_text()
    page = tmp_path / "viewer.html"
    # Inline, so the page works from a file; "</" escaped so neither text ends the script.
    script = viewer_js.replace("</script", "<\\/script")
    data = payload.replace("</", "<\\/")
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        '<mutation-test-report-app title-postfix="harness"></mutation-test-report-app>'
        f"<script>{script}</script>"
        '<script>document.querySelector("mutation-test-report-app").report = '
        f"{data};</script></body></html>",
        encoding="utf-8",
    )
    file = "agentdojo/default_suites/v1/tools/banking_client.py"
    survivor = next(
        m
        for m in json.loads(payload)["files"][file]["mutants"]
        if "update_scheduled_transaction" in m["description"] and m["status"] == "Survived"
    )
    browser.get(f"{page.as_uri()}#mutant/{file}")
    from selenium.webdriver.support.ui import WebDriverWait

    find_dot = (
        ALL_ELEMENTS
        + """
    return all(document.body, []).find(e => e.tagName.toLowerCase() === 'svg'
      && e.getAttribute('data-mutant-id') === arguments[0]) || null;"""
    )
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(find_dot, survivor["id"]))
    # Select the survivor as a click on its dot does (the dot is inside shadow roots).
    click = (
        find_dot.replace("return all", "const dot = all")
        + """
    dot.dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true}));"""
    )
    browser.execute_script(click, survivor["id"])
    diff_rows = (
        ALL_ELEMENTS
        + """
    return all(document.body, []).filter(e => e.tagName === 'TR'
      && (e.classList.contains('diff-old') || e.classList.contains('diff-new')))
      .map(e => [e.classList.contains('diff-old') ? 'old' : 'new',
                 e.textContent]);"""
    )
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(diff_rows))
    rows = browser.execute_script(diff_rows)
    old = [text for kind, text in rows if kind == "old"]
    new = [text for kind, text in rows if kind == "new"]
    # The real change: lines 137-145 go (line numbers are CSS counters, so the texts are
    # compared), five assignments among them; five `pass` come.
    source = json.loads(payload)["files"][file]["source"].splitlines()[136:145]
    assert len(old) == len(source) == 9
    assert all(line.strip() in text for line, text in zip(source, old, strict=True))
    assert sum(" = " in text for text in old) == 5
    assert sum(text.strip() == "pass" for text in new) == 5
    assert not any(" = " in text for text in new)
    browser.save_screenshot(str(tmp_path / "viewer.png"))


VIEWER_PLAN = """
schema_version: 1
name: viewer
description: a killed mutant and a survivor for the viewer test (issue 29)
seed: 29
timeout_seconds: 60
liveness_probes_per_tool: 6
arms:
  - name: bank
    kind: closed_world
    target: toy_domain
    tools: [deposit]
    operators: [M-PRECOND]
    draw_per_operator: 2
  - name: bank-open
    kind: open_world
    target: toy_domain
    tools: [deposit, transfer]
    operators: ["MM-string"]
    draw_per_operator: 6
"""


def _viewer_page(payload: str, viewer_js: str, folder: Path) -> Path:
    page = folder / "viewer.html"
    script = viewer_js.replace("</script", "<\\/script")
    data = payload.replace("</", "<\\/")
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        '<mutation-test-report-app title-postfix="harness"></mutation-test-report-app>'
        f"<script>{script}</script>"
        '<script>document.querySelector("mutation-test-report-app").report = '
        f"{data};</script></body></html>",
        encoding="utf-8",
    )
    return page


def test_the_viewer_shows_killed_by_and_covered_by_clauses(browser, viewer_js, tmp_path) -> None:
    """Issue 29, item 4: on a fresh schema-4 run, a killed mutant's drawer names the clause
    that killed it and a survivor's says how many clauses covered it."""
    import sys

    from selenium.webdriver.support.ui import WebDriverWait

    root = tmp_path / "project"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "viewer.yaml").write_text(VIEWER_PLAN)
    for command in (["draw"], ["freeze"], ["run", "--workers", "1"]):
        done = subprocess.run(
            [sys.executable, "-m", "harness", command[0], "plans/viewer.yaml", *command[1:]],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    (run,) = (root / "results" / "viewer").iterdir()
    payload = (report(run, tmp_path / "report").mutation_report).read_text()
    mutants = [m for f in json.loads(payload)["files"].values() for m in f["mutants"]]
    tests = {
        t["id"]: t["name"] for f in json.loads(payload)["testFiles"].values() for t in f["tests"]
    }
    killed = next(m for m in mutants if m["status"] == "Killed")
    survivor = next(m for m in mutants if m["status"] == "Survived")
    assert survivor["coveredBy"] and not survivor.get("killedBy")
    page = _viewer_page(payload, viewer_js, tmp_path)
    # One file: the viewer drops the directory the files share from its routes.
    assert list(json.loads(payload)["files"]) == ["toy_domain/bank.py"]
    file = "bank.py"
    drawer_text = (
        ALL_ELEMENTS
        + """
    return all(document.body, []).filter(e => e.tagName.toLowerCase() === 'mte-drawer-mutant')
      .map(e => (e.shadowRoot ? e.shadowRoot.textContent : '') + e.textContent).join(' ');"""
    )
    find_dot = (
        ALL_ELEMENTS
        + """
    return all(document.body, []).find(e => e.tagName.toLowerCase() === 'svg'
      && e.getAttribute('data-mutant-id') === arguments[0]) || null;"""
    )
    click = (
        find_dot.replace("return all", "const dot = all")
        + """
    dot.dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true}));"""
    )
    # The viewer hides killed mutants until its Killed filter is ticked.
    show_killed = (
        ALL_ELEMENTS
        + """
    const box = all(document.body, []).find(e => e.id === 'filter-Killed');
    if (box && !box.checked) box.click();
    return !!box;"""
    )
    shown = {}
    for mutant in (killed, survivor):
        browser.get(f"{page.as_uri()}#mutant/{file}")
        WebDriverWait(browser, 30).until(lambda d: d.execute_script(show_killed))
        WebDriverWait(browser, 30).until(lambda d, m=mutant: d.execute_script(find_dot, m["id"]))
        browser.execute_script(click, mutant["id"])
        WebDriverWait(browser, 30).until(
            lambda d: (
                "Killed by" in d.execute_script(drawer_text)
                or "Covered by" in d.execute_script(drawer_text)
            )
        )
        shown[mutant["status"]] = " ".join(browser.execute_script(drawer_text).split())
        browser.save_screenshot(str(tmp_path / f"viewer-{mutant['status']}.png"))
    first_clause = tests[killed["killedBy"][0]]
    assert f"Killed by: {first_clause}" in shown["Killed"]
    assert f"Covered by {len(killed['coveredBy'])} tests" in shown["Killed"]
    assert (
        f"Covered by {len(survivor['coveredBy'])} tests (yet still survived)" in (shown["Survived"])
    )


CURRENT = ROOT / "results" / "reference" / "closed_world" / "3d9ec0a5947a323f"
ARTIFACTS = ROOT / "test-artifacts"  # kept for a person to look at (gitignored)


def test_report_html_first_screen_answers_the_question(browser, tmp_path) -> None:
    """At 1366x768 the first screen holds the plan and freeze, the verdict banner (the failed
    prediction named) and the whole forest plot; the page never scrolls sideways."""
    out = report(CURRENT, tmp_path / "report").out_dir
    browser.set_window_size(1366, 768)
    try:
        browser.get((out / "report.html").as_uri())
        height = browser.execute_script("return window.innerHeight")
        for element_id in ("verdict", "forest"):
            box = browser.execute_script(
                "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
                "return [r.top, r.bottom];",
                element_id,
            )
            assert 0 <= box[0] < box[1] <= height, (element_id, box, height)
        forest_image = browser.find_element("css selector", "img.forest")
        assert (
            browser.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return r.bottom;", forest_image
            )
            <= height
        )
        banner = _text(browser, "verdict")
        assert "29 predictions scored: 15 held, 1 failed, 13 undecided" in banner
        assert "recall_floor real M-PARTIAL: 0.611 [0.386, 0.797], predicted ≥ 0.800" in banner
        freeze = browser.find_element("css selector", "p.freeze").text
        assert "record committed in b56582c38a40 before the run started" in freeze
        widths = browser.execute_script(
            "const d = document.documentElement; return [d.scrollWidth, d.clientWidth];"
        )
        assert widths[0] == widths[1], widths
        # every headline table scrolls in its own box instead
        boxes = browser.find_elements("css selector", "div.scroll")
        assert boxes and all(b.size["width"] <= widths[1] for b in boxes)
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "report-first-screen.png"))
        # a survivor's witness and diff open in place
        survivor = browser.find_element("css selector", "tr.pair.survivor")
        details = survivor.find_elements("css selector", "details")
        assert details, "a survivor has its diff in place"
        details[-1].find_element("css selector", "summary").click()
        assert details[-1].get_attribute("open") is not None
        assert survivor.find_element("css selector", "pre.diff").is_displayed()
    finally:
        browser.set_window_size(1400, 1100)
