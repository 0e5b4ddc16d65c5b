"""One self-contained HTML file that steps through a game: no network, no external script.

The board of every position is drawn here (`scene.to_svg`), so the page shows exactly
the pictures `--svg` writes; a few lines of inline JavaScript swap them. Previous/next
buttons, the arrow keys (Home/End for the ends), a turn slider, and the move list with
each turn's payment (click a turn to jump to it). The page marks the turn shown in
`document.body.dataset.turn`, and each rug half in the board carries `data-square` and
`data-token`, Assam `data-assam`: what the browser test reads back.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from marrakech_sim.files import write_atomic
from marrakech_sim.record import Replay
from marrakech_sim.rules import GameState
from marrakech_sim.show.scene import board_scene, to_svg
from marrakech_sim.show.words import Legend, game_title, player

#: the board view's style, shared with `marrakech play --web`'s page
BOARD_STYLE = """
#board { flex: none; }
#board svg { display: block; }
"""

_STYLE = """
body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 8px 0; }
.tags { font-size: 12px; color: #555; margin-bottom: 8px; }
.wrap { display: flex; gap: 18px; align-items: flex-start; }
.controls { margin: 6px 0 10px 0; display: flex; gap: 8px; align-items: center; }
.controls input[type=range] { width: 320px; }
#moves { font-size: 12px; max-height: 640px; overflow-y: auto; border: 1px solid #ccc;
         padding: 4px 10px; min-width: 360px; margin: 0; list-style: none; }
#moves li { padding: 2px 4px; cursor: pointer; }
#moves li.current { background: #ffe9a8; }
#moves li .pay { color: #a33; }
"""

_SCRIPT = """
(function () {
  var frames = JSON.parse(document.getElementById('frames').textContent);
  var board = document.getElementById('board');
  var slider = document.getElementById('turn');
  var label = document.getElementById('label');
  var items = document.querySelectorAll('#moves li');
  var last = frames.length - 1;
  function show(t) {
    t = Math.max(0, Math.min(last, t));
    board.innerHTML = frames[t];
    slider.value = t;
    label.textContent = t === 0 ? 'start' : 'after turn ' + t + ' of ' + last;
    document.body.dataset.turn = t;
    for (var i = 0; i < items.length; i++) {
      items[i].classList.toggle('current', i + 1 === t);
    }
    if (t > 0 && items[t - 1].scrollIntoView) { items[t - 1].scrollIntoView({block: 'nearest'}); }
  }
  function current() { return parseInt(document.body.dataset.turn, 10); }
  document.getElementById('prev').addEventListener('click', function () { show(current() - 1); });
  document.getElementById('next').addEventListener('click', function () { show(current() + 1); });
  slider.addEventListener('input', function () { show(parseInt(slider.value, 10)); });
  for (var i = 0; i < items.length; i++) {
    items[i].addEventListener('click', (function (t) { return function () { show(t); }; })(i + 1));
  }
  document.addEventListener('keydown', function (e) {
    if (e.target === slider) { return; }
    var step = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1}[e.key];
    if (step) { show(current() + step); e.preventDefault(); }
    else if (e.key === 'Home') { show(0); e.preventDefault(); }
    else if (e.key === 'End') { show(last); e.preventDefault(); }
  });
  show(parseInt(document.body.dataset.turn, 10) || 0);
})();
"""


def page_head(title: str, style: str) -> str:
    """The start of both pages (a replay's and `marrakech play --web`'s), to their <body>."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{BOARD_STYLE}{style}</style>
</head>
"""


def board_svg(state: GameState, legend: Legend = Legend()) -> str:
    """The board view of both pages (this one and `marrakech play --web`'s): the picture
    `--svg` draws of `state`, as inline SVG."""
    return to_svg(board_scene(state, legend), standalone=False)


def page_html(replay: Replay, start: int = 0) -> str:
    """The page as one HTML text."""
    record = replay.record
    title = game_title(record)
    frames = [
        board_svg(position, Legend.of_replay(replay, i))
        for i, position in enumerate(replay.positions)
    ]
    # inside <script>, "</" would end the element: JSON allows "<\/"
    data = json.dumps(frames).replace("</", "<\\/")
    moves = []
    for info in replay.turns:
        # every action of the turn in its order (describe's parts), the payment marked
        _, what = info.describe(record.seats, player).split(": ", 1)
        parts = [
            f'<span class="pay">{escape(part)}</span>'
            if part.startswith(("pays ", "is bankrupt"))
            else escape(part)
            for part in what.split(", ")
        ]
        moves.append(
            f'<li data-turn="{info.turn}"><b>{info.turn}.</b> {player(info.seat)} '
            f"({escape(record.seats[info.seat])}): {', '.join(parts)}</li>"
        )
    tags = " · ".join(f"{escape(name)}: {escape(value)}" for name, value in record.tags()[:-1])
    last = len(replay.positions) - 1
    start = max(0, min(start, last))
    return f"""{page_head(title, _STYLE)}<body data-turn="{start}">
<h1>{escape(title)}</h1>
<div class="tags">{tags}</div>
<div class="controls">
  <button id="prev" type="button" title="previous turn (←)">◀ previous</button>
  <button id="next" type="button" title="next turn (→)">next ▶</button>
  <input id="turn" type="range" min="0" max="{last}" value="{start}" aria-label="turn">
  <span id="label"></span>
</div>
<div class="wrap">
  <div id="board"></div>
  <ol id="moves">
{chr(10).join(moves)}
  </ol>
</div>
<script id="frames" type="application/json">{data}</script>
<script>{_SCRIPT}</script>
</body>
</html>
"""


def write_page(replay: Replay, path: str | Path, start: int = 0) -> Path:
    """Write the page of a replayed game to `path`."""
    path = Path(path)
    write_atomic(path, page_html(replay, start))
    return path
