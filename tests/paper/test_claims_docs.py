"""The claims README.md and docs/claims.md state come from the report docs/claims.md prints.

Every number the prose quotes to four decimals (as the report prints it) must be a number of the
report printed in docs/claims.md, and that report must have the sections the code prints now.
"""

import re
from pathlib import Path

from feco.paper.claims_report import render
from tests.paper.test_claims import _report, _stored_grid

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"(?<![\d.])[−-]?\d+\.\d{4}(?![\d])")


def _between(text: str, start: str, end: str) -> str:
    return text[text.index(start):text.index(end, text.index(start))]


def _numbers(text: str) -> set[str]:
    return {n.replace("−", "-").lstrip("-") for n in NUMBER.findall(text)}


def _report_block() -> str:
    claims = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    return _between(claims, "```text", "\n```\n")


def test_every_number_the_readme_quotes_is_in_the_report():
    # the README leaves the claims to docs/claims.md; a figure it quotes must still be the report's
    quoted = _numbers((ROOT / "README.md").read_text(encoding="utf-8"))
    assert quoted <= _numbers(_report_block()), sorted(quoted - _numbers(_report_block()))


def test_every_number_claims_md_quotes_is_in_the_report():
    claims = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    quoted = _numbers(_between(claims, "## What reproduced", "## The report"))
    assert len(quoted) >= 20
    assert quoted <= _numbers(_report_block()), sorted(quoted - _numbers(_report_block()))


def test_the_report_in_claims_md_has_every_section_the_code_prints():
    titles = [part.splitlines()[0] for part in render(_report(_stored_grid())).split("\n\n")[1:]]
    block = _report_block()
    assert all(title in block for title in titles), [t for t in titles if t not in block]
