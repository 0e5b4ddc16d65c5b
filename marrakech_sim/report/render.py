"""Write the report's files: HTML, Markdown and CSV, from the sections' parts.

The HTML is one self-contained file (charts as inline SVG, inline CSS, no script, no
external reference) rendered by jinja2 with autoescaping, so strategy and rule set names
from a user's config are shown as text, never as markup. The Markdown has the same tables
and links the PNG files written beside it. What each section says and draws is its own
module's (`report.sections`).
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd

from marrakech_sim.report.sections.base import OPEN_ROWS, Chart, Part
from marrakech_sim.report.sections.variants import UNITS, is_share

HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 75em; margin: 2em auto;
       padding: 0 1em; color: #111; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #999; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
.scroll { max-width: 100%; overflow-x: auto; }
figure { margin: 1em 0; max-width: 100%; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-style: italic; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
.meta { color: #444; }
.findings li { margin: 0.4em 0; }
details { margin: 0.5em 0 1.5em; }
summary { font-weight: bold; cursor: pointer; }
</style></head><body>
<h1>{{ title }}</h1>
<p class="meta">{{ subtitle }}</p>
<nav><ul>{% for s in sections %}
<li><a href="#s{{ loop.index }}">{{ s.title }}</a></li>{% endfor %}</ul></nav>
{% for s in sections %}
<section id="s{{ loop.index }}"><h2>{{ s.title }}</h2>
{% for p in s.paragraphs %}<p>{{ p }}</p>{% endfor %}
{% if s.items %}<ul class="findings">{% for item in s.items %}
<li>{{ item }}</li>{% endfor %}</ul>{% endif %}
{% for heading, items, folded in s.groups %}<details{% if not folded %} open{% endif %}>
<summary>{{ heading }}</summary><ul class="findings">{% for item in items %}
<li>{{ item }}</li>{% endfor %}</ul></details>{% endfor %}
{% for name, caption in s.charts %}<figure role="img" aria-label="{{ caption }}">
{{ images[name] | safe }}
<figcaption>{{ caption }}</figcaption></figure>{% endfor %}
{% for caption, header, body in s.tables %}{% set long = s.fold and body | length > open_rows %}
{% if long %}<details><summary>{{ caption }} ({{ body | length }} rows: show)</summary>{% endif %}
<div class="scroll"><table>
<caption>{{ caption }}</caption>
<thead><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in body %}
<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody></table></div>
{% if long %}</details>{% endif %}
{% endfor %}{% for p in s.closing %}<p>{{ p }}</p>{% endfor %}</section>
{% endfor %}
</body></html>
"""


# what Markdown would read as markup in the report's text, each escaped with a backslash
# (never an HTML entity): a tag or an entity, emphasis, a link's `](`, strikethrough, a cell
# break; `#` and `>` only where they would start a heading or a quote. Backticks pass: the
# report writes them around commands, and a code span is text, not markup.
_MD_MARKUP = re.compile(
    r"\\|<(?=[A-Za-z/!?])|&(?=#?\w+;)|\*|(?<!\w)_|_(?!\w)|\](?=[(\[:])|~|\||^[#>]"
)


def md_escape(text: str) -> str:
    """Text as Markdown that reads as itself: no markup, no HTML, no cell breaks.

    Only what Markdown would take for markup is escaped, with a backslash, so the file
    reads cleanly as plain text too ('p < 0.05', 'orient_at_end' and '[+0.1, +1.7]' stay
    as they are).
    """
    one_line = " ".join(str(text).splitlines())
    return _MD_MARKUP.sub(lambda m: "\\" + m.group(0), one_line)


def write_html(
    path: Path,
    title: str,
    subtitle: str,
    sections: list[Part],
    charts: dict[str, Chart],
) -> None:
    """Write the self-contained HTML report; charts are inline SVG (crisp at any zoom).

    The SVG is matplotlib's, with text drawn as paths, so no name from a config reaches it
    as markup; everything else is autoescaped.
    """
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    images = {name: svg for name, (_, _, svg) in charts.items()}
    html = env.from_string(HTML_TEMPLATE).render(
        title=title, subtitle=subtitle, sections=sections, images=images, open_rows=OPEN_ROWS
    )
    path.write_text(html, encoding="utf-8")


def write_markdown(path: Path, title: str, subtitle: str, sections: list[Part]) -> None:
    """Write the Markdown report; charts are the PNG files beside it."""
    lines = [f"# {md_escape(title)}", "", md_escape(subtitle), ""]
    for s in sections:
        lines += [f"## {md_escape(s.title)}", ""]
        for p in s.paragraphs:
            lines += [md_escape(p), ""]
        if s.items:
            lines += [f"- {md_escape(item)}" for item in s.items] + [""]
        for heading, items, _ in s.groups:
            lines += [f"**{md_escape(heading)}**", ""]
            lines += [f"- {md_escape(item)}" for item in items] + [""]
        for name, caption in s.charts:
            lines += [f"![{md_escape(caption)}]({name}.png)", "", f"*{md_escape(caption)}*", ""]
        for caption, header, body in s.tables:
            lines += [f"**{md_escape(caption)}**", ""]
            lines.append("| " + " | ".join(md_escape(h) for h in header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in body]
            lines.append("")
        for p in s.closing:
            lines += [md_escape(p), ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def csv_unit(metric: str) -> str:
    """The unit of a metric's values in the CSV tables (docs/report-tables.md): a share or
    a rate is a fraction from 0 to 1 (x 100 for %, a difference of them x 100 for pp)."""
    return "fraction" if is_share(metric) else UNITS.get(metric, "")


CSV_DIGITS = 7  # significant digits of a float in the CSV tables: below every interval


def write_csv(table: pd.DataFrame, path: Path) -> None:
    """Write one table as CSV: floats to `CSV_DIGITS` significant digits (far finer than
    any interval here, without a tail of noise like 107759.33333334327), whole-number
    floats (counts) as integers, and beside a ``metric`` column the ``unit`` of its
    values."""
    out = table.copy()
    if "metric" in out and "unit" not in out:
        out.insert(out.columns.get_loc("metric") + 1, "unit", out["metric"].map(csv_unit))
    for name in out.columns:
        col = out[name]
        if col.dtype.kind == "f" and not np.isinf(col).any():
            known = col.dropna()
            if len(known) and (known == known.round()).all() and known.abs().max() < 2**53:
                out[name] = col.astype("Int64")
    out.to_csv(path, index=False, float_format=f"%.{CSV_DIGITS}g")
