"""Static checks of the Markdown documentation: what a reader follows must lead somewhere.

  * every relative link and image (`](path)`, `](path#anchor)`, `](#anchor)`) in a tracked
    Markdown file names a file or directory of the repository, and an anchor into a Markdown file
    names one of its headings;
  * the README keeps the two commands of the quick start (`.ci/run` calls the second).

Run: .tools/venv/bin/python -m pytest -q -p no:cacheprovider tests/deploy
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def markdown_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    files = [REPO / f for f in out]
    # Markdown added but not committed yet counts too.
    files += [p for p in (REPO / "docs").glob("*.md") if p not in files]
    return sorted(p for p in files if p.is_file())


def prose_lines(path: Path) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    found = []
    for line in prose_lines(path):
        # Inline code is not a link.
        line = re.sub(r"`[^`]*`", "", line)
        found += LINK.findall(line)
    return found


@pytest.mark.parametrize("md", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(md: Path):
    broken = []
    for target in links(md):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (md.parent / path_part).resolve() if path_part else md
        if not dest.exists():
            broken.append(f"{target}: no such file")
            continue
        if REPO.resolve() not in dest.parents and dest != REPO.resolve():
            broken.append(f"{target}: outside the repository")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(REPO.resolve())}")
    assert not broken, f"{md.relative_to(REPO)}:\n  " + "\n  ".join(broken)


def test_readme_quick_start_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "scripts/demo.sh" in readme
    assert "scripts/test.sh" in readme
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
