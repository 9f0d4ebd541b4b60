"""The documents stand alone: every relative link in a shipped .md file leads to a
file of the repository (and to a heading of it, when it names one). A user who
clones the repository or unpacks the sdist has nothing else."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def shipped_markdown() -> list[Path]:
    """The .md files git tracks or would track (not ignored): what a clone gets."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
                             cwd=ROOT, capture_output=True, text=True, check=True, timeout=60).stdout
        files = [ROOT / line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):   # an unpacked sdist: no git
        files = [p for p in ROOT.rglob("*.md") if not {".venv", "build", "dist"} & set(p.parts)]
    return sorted(p for p in files if p.is_file())


def anchors(markdown: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in FENCE.sub("", markdown).splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            text = re.sub(r"[`*_]", "", m.group(1).strip().lower())
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def dead_links(md: Path) -> list[str]:
    text = FENCE.sub("", md.read_text(encoding="utf-8"))
    dead = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):      # https:, mailto:, file:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (md.parent / path_part).resolve() if path_part else md
        if not dest.is_relative_to(ROOT):
            dead.append(f"{target} (outside the repository)")
        elif not dest.exists():
            dead.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            dead.append(f"{target} (no such heading)")
    return dead


def test_there_are_documents_to_check():
    names = {p.relative_to(ROOT).as_posix() for p in shipped_markdown()}
    assert {"README.md", "docs/RULES.md", "docs/CONTRACT.md", "docs/INSTALL.md", "systemd/README.md"} <= names
    # The floor's manual, a folder of pages: the link check reads each of them too.
    assert {f"docs/floor/{p.name}" for p in (ROOT / "docs" / "floor").glob("*.md")} <= names
    assert {"docs/floor/README.md", "docs/floor/install.md", "docs/floor/group.md"} <= names


@pytest.mark.parametrize("md", shipped_markdown(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_dead_relative_link(md):
    assert dead_links(md) == []


def test_the_checker_sees_a_dead_link(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "here.md").write_text("# Here\n## A part\n")
    doc = tmp_path / "doc.md"
    doc.write_text("[a](../shared/design/RULES.md) [b](gone.md) [c](here.md#a-part) [d](here.md#nope)\n"
                   "[e](https://example.org/x.md) [f](#top)\n```\n[g](in-a-fence.md)\n```\n# Top\n")
    assert dead_links(doc) == ["../shared/design/RULES.md (outside the repository)", "gone.md (no such file)",
                               "here.md#nope (no such heading)"]



#: A page of the floor's manual is read by one reader for one concept; past this, split it.
FLOOR_PAGE_LINES = 500


@pytest.mark.parametrize("md", sorted((ROOT / "docs" / "floor").glob("*.md")), ids=lambda p: p.name)
def test_no_page_of_the_floors_manual_is_over_500_lines(md):
    assert len(md.read_text(encoding="utf-8").splitlines()) <= FLOOR_PAGE_LINES


def test_the_floors_index_names_every_page_and_its_reader():
    """docs/floor/README.md links each page of the folder from a row of its table, with a reader."""
    index = (ROOT / "docs" / "floor" / "README.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| \[[^\]]+\]\((\w+\.md)\) \| ([^|]+) \|", index, re.M)}
    pages = {p.name for p in (ROOT / "docs" / "floor").glob("*.md")} - {"README.md"}
    assert set(rows) == pages
    assert all(reader.strip() for reader in rows.values())

def test_the_rule_catalog_covers_every_profile_id():
    """docs/RULES.md names every irregularity id the shipped profiles configure."""
    from dealerbox.rules.profiles import available_profiles, load_profile

    catalog = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    for name in available_profiles():
        for rule_id in load_profile(name).rules:
            assert f"`{rule_id}`" in catalog, (name, rule_id)


# -- what the documents say about the rest of the repository -----------------------------------------
def test_no_document_cites_the_trackers_issue_numbers():
    """A reader of a clone has no tracker: a doc says what was found, not which issue said so."""
    cites = re.compile(r"\bissues?\s*#?\d+", re.I)
    found = [f"{md.relative_to(ROOT)}:{n}" for md in shipped_markdown()
             for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1) if cites.search(line)]
    assert found == []


def test_the_readme_names_every_debian_package_make_installs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    makefile = makefile.replace("\\\n", " ")  # a value continued over lines is one value
    tools = re.search(r"^SYSTEM_TOOLS\s*:=\s*(.*)$", makefile, re.M).group(1).split()
    packages = {pair.split(":")[1] for pair in tools}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = re.search(r"`make test` and `make bench` also install.*?\n\n", readme, re.S).group(0)
    assert {p for p in packages if f"`{p}`" not in paragraph} == set()


def test_journal_md_lists_the_journal_config_keys():
    """docs/JOURNAL.md's list of the `[journal]` keys is the declared section's."""
    from dealerbox.service.config import JournalSection
    from dealerbox.options import options_of

    text = (ROOT / "docs" / "JOURNAL.md").read_text(encoding="utf-8")
    listed = re.search(r"The table config's `\[journal\]` section sets these: (.*?) \(", text, re.S).group(1)
    assert re.findall(r"`(\w+)`", listed) == [key for key, _opt, _default in options_of(JournalSection)]
    assert "may add to `[journal]`" not in text


def _commented_mouth_sensor(config_text: str) -> str:
    """The config's commented-out ``[mouth_sensor]`` section, uncommented."""
    lines = config_text.splitlines()
    start = lines.index("# [mouth_sensor]")
    block = []
    for line in lines[start:]:
        if not line.startswith("# ") or (block and line.startswith("# [")):
            break
        block.append(line[2:])
    return "\n".join(block) + "\n"


@pytest.mark.parametrize("name", ["pi4-rc522.toml", "pi5-pepper.toml", "sim.toml"])
def test_each_table_file_carries_the_mouth_sensor_its_readme_wires(name, tmp_path):
    """Uncommented, the shipped file's [mouth_sensor] loads (its pin is free in that wiring)
    and says the pin and level of firmware_config/tables/README.md's wiring table."""
    from dealerbox.service.config import TABLES_DIR, load_config

    text = (TABLES_DIR / name).read_text(encoding="utf-8")
    (tmp_path / name).write_text(text + "\n" + _commented_mouth_sensor(text), encoding="utf-8")
    sensor = load_config(tmp_path / name, check_devices=False).mouth_sensor
    readme = (TABLES_DIR / "README.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `{re.escape(name)}` \| BCM (\d+) .*\| `(\w+)` \|$", readme, re.M)
    assert row, f"no wiring row for {name}"
    assert (sensor.pin, sensor.blocked_level) == (int(row.group(1)), row.group(2))
    assert sensor.backend == ("sim" if name == "sim.toml" else "real")
    assert load_config(TABLES_DIR / name, check_devices=False).mouth_sensor.pin is None   # shipped commented out
