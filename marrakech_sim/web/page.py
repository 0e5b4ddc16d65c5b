"""The play page: one HTML text with inline style and script (no asset from the network).

The board is the server's SVG (`show.page.board_svg`, the replay page's board view);
the script lays its highlights over it in the board's own coordinates: Assam's walks
under the rotation button the pointer is on, the legal placements under the pointer,
the region a walk would pay for, and the frames of what the other seats did (a roll's
frame walks a marker along Assam's path, square by square). The script marks its state
on `document.body.dataset` (phase, decisions, position, busy, refusals, fault, games),
which the browser tests read back.
"""

from __future__ import annotations

from html import escape

from marrakech_sim.show.page import page_head

_STYLE = """
body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 10px 0; }
.wrap { display: flex; gap: 18px; align-items: flex-start; }
.side { width: 400px; font-size: 13px; }
.ask { font-size: 14px; font-weight: bold; margin: 0 0 8px 0; min-height: 38px; }
#drawn { display: inline-block; width: 14px; height: 14px; border: 1px solid #333;
         vertical-align: middle; margin-right: 4px; }
.buttons { display: flex; gap: 6px; flex-wrap: wrap; margin: 6px 0; }
.buttons button { font-size: 13px; padding: 5px 10px; }
#message { min-height: 36px; margin: 6px 0; padding: 4px 6px; }
#message.refused { background: #fde2dd; color: #8a1c0b; }
#message.hint { background: #e3f0da; color: #24531a; }
#caption { min-height: 18px; color: #444; margin: 4px 0; font-style: italic; }
#events, #moves { margin: 4px 0; padding-left: 20px; max-height: 220px; overflow-y: auto; }
#moves { font-size: 12px; border-top: 1px solid #ddd; padding: 4px 0 0 0; list-style: none; }
#result { font-weight: bold; margin: 8px 0; }
.legal { fill: none; stroke: #555; stroke-width: 1.2; stroke-dasharray: 4 3; }
.preview { fill-opacity: 0.55; stroke: #222; stroke-width: 2; }
.selected { fill: none; stroke: #000; stroke-width: 3.5; }
.walk { fill: none; stroke: #222; stroke-width: 3; stroke-dasharray: 7 4;
        stroke-linecap: round; }
.stop { fill: #fff; stroke: #222; stroke-width: 1.5; }
.pays { fill: #d7301f; fill-opacity: 0.28; stroke: #a01a0c; stroke-width: 2; }
.due { fill: #a01a0c; }
.rug { fill: none; stroke: #000; stroke-width: 3.5; }
.walker { fill: #222; fill-opacity: 0.8; stroke: #fff; stroke-width: 2;
          transition: cx 0.15s linear, cy 0.15s linear; }
"""

_SCRIPT = r"""
(function () {
  var SVGNS = 'http://www.w3.org/2000/svg';
  var params = new URLSearchParams(location.search);
  var DELAY = params.has('delay') ? parseInt(params.get('delay'), 10) : 650;
  var board = document.getElementById('board');
  var body = document.body;
  var G = null;           // the current view
  var selected = null;    // the first square of a placement, [x, y]
  var hovered = null;     // the rotation whose walks are shown
  body.dataset.refusals = '0';

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function geo() { return G.geometry; }
  function box(x, y) {
    var g = geo();
    return {x: g.margin + x * g.square, y: g.margin + y * g.square, s: g.square};
  }
  function centre(q) { var b = box(q[0], q[1]); return [b.x + b.s / 2, b.y + b.s / 2]; }
  function same(a, b) { return a && b && a[0] === b[0] && a[1] === b[1]; }
  function overlay() {
    var svg = board.querySelector('svg');
    var old = svg.querySelector('#overlay');
    if (old) { old.remove(); }
    return el('g', {id: 'overlay', 'pointer-events': 'none'}, svg);
  }
  function square(layer, q, cls, fill) {
    var b = box(q[0], q[1]);
    var r = el('rect', {x: b.x + 2, y: b.y + 2, width: b.s - 4, height: b.s - 4,
                        'class': cls}, layer);
    if (fill) { r.setAttribute('fill', fill); }
    return r;
  }
  function rug(layer, a, b, cls, fill) {
    var p = box(Math.min(a[0], b[0]), Math.min(a[1], b[1]));
    var w = (Math.abs(a[0] - b[0]) + 1) * p.s, h = (Math.abs(a[1] - b[1]) + 1) * p.s;
    var r = el('rect', {x: p.x + 3, y: p.y + 3, width: w - 6, height: h - 6, 'class': cls},
               layer);
    if (fill) { r.setAttribute('fill', fill); }
  }
  function path(layer, squares) {
    var pts = squares.map(function (q) { return centre(q).join(','); }).join(' ');
    el('polyline', {points: pts, 'class': 'walk'}, layer);
  }
  function label(layer, q, text, dy) {
    var c = centre(q);
    var t = el('text', {x: c[0], y: c[1] + (dy || 0), 'text-anchor': 'middle',
                        'dominant-baseline': 'central', 'font-size': 12,
                        'font-weight': 'bold'}, layer);
    t.textContent = text;
    return t;
  }

  // ------------------------------------------------------------ drawing a view

  function drawWalks(layer, rotation) {
    var walk = G.walks && G.walks[String(rotation)];
    if (!walk) { return; }
    walk.stops.forEach(function (s) {
      s.region.forEach(function (q) { square(layer, q, 'pays'); });
    });
    path(layer, walk.path);
    walk.stops.forEach(function (s) {
      var c = centre(s.square);
      el('circle', {cx: c[0], cy: c[1] - 8, r: 10, 'class': 'stop'}, layer);
      label(layer, s.square, String(s.roll), -8);
      if (s.due) {
        var b = box(s.square[0], s.square[1]);
        el('rect', {x: b.x + 6, y: b.y + b.s - 22, width: b.s - 12, height: 16, rx: 4,
                    'class': 'due'}, layer);
        var t = label(layer, s.square, 'pay ' + s.due, b.s / 2 - 14);
        t.setAttribute('fill', '#fff');
      }
    });
  }
  function containing(q) {
    return (G.placements || []).filter(function (p) { return same(p[0], q) || same(p[1], q); });
  }
  function drawPlacements(layer, at) {
    var legal = {};
    (G.placements || []).forEach(function (p) {
      legal[p[0].join(',')] = p[0]; legal[p[1].join(',')] = p[1];
    });
    Object.keys(legal).forEach(function (k) { square(layer, legal[k], 'legal'); });
    var focus = selected || at;
    if (focus) {
      containing(focus).forEach(function (p) {
        var other = same(p[0], focus) ? p[1] : p[0];
        if (!selected || !at || same(at, other) || same(at, selected)) {
          rug(layer, p[0], p[1], 'preview', G.colour_hex);
        }
      });
    }
    if (selected) { square(layer, selected, 'selected'); }
  }
  function redraw(at) {
    if (!G) { return; }
    var layer = overlay();
    if (G.phase === 'orient' && hovered !== null) { drawWalks(layer, hovered); }
    if (G.phase === 'place') { drawPlacements(layer, at); }
  }
  function walkAlong(layer, squares) {
    // Assam's walk as a marker stepping square by square within the frame's time
    var at = centre(squares[0]);
    var dot = el('circle', {cx: at[0], cy: at[1], r: 9, 'class': 'walker'}, layer);
    var step = Math.floor(DELAY * 0.7 / (squares.length - 1));
    squares.slice(1).forEach(function (q, i) {
      setTimeout(function () {
        var c = centre(q);
        dot.setAttribute('cx', c[0]); dot.setAttribute('cy', c[1]);
        dot.dataset.square = q.join(',');
      }, step * (i + 1));
    });
  }
  function drawOverlay(o) {
    var layer = overlay();
    (o.region || []).forEach(function (q) { square(layer, q, 'pays'); });
    if (o.path) { path(layer, o.path); }
    if (o.path && o.path.length > 1 && DELAY > 0) { walkAlong(layer, o.path); }
    if (o.rug) { rug(layer, o.rug[0], o.rug[1], 'rug'); }
  }
  function render(view) {
    G = view;
    selected = null;
    board.innerHTML = view.board;
    body.dataset.phase = view.phase;
    body.dataset.decisions = String(view.decisions);
    body.dataset.position = view.position;
    document.getElementById('prompt').textContent = view.prompt;
    var drawn = document.getElementById('drawn');
    drawn.style.display = view.colour ? 'inline-block' : 'none';
    drawn.style.background = view.colour_hex || 'transparent';
    drawn.title = view.colour ? 'your rug this turn: ' + view.colour : '';
    var moves = document.getElementById('moves');
    moves.innerHTML = '';
    view.moves.forEach(function (m) {
      var li = document.createElement('li'); li.textContent = m; moves.appendChild(li);
    });
    moves.scrollTop = moves.scrollHeight;
    var result = document.getElementById('result');
    body.dataset.fault = view.fault ? '1' : '0';
    if (view.phase !== 'over') {
      result.textContent = '';
    } else if (view.fault) {
      result.textContent = view.saved.record
        ? 'The turns played are saved in ' + view.saved.record +
          '; replay them with: marrakech replay ' + view.saved.record
        : 'The turns played could not be saved.';
    } else {
      result.textContent = 'Result ' + view.result + '. Saved: ' + view.saved.record +
        ' (run folder ' + view.saved.run + '); replay it with: marrakech replay ' +
        view.saved.record;
    }
    document.getElementById('new-game').style.display =
      view.phase === 'over' ? 'inline-block' : 'none';
    redraw(null);
  }
  function show(view) {
    var events = document.getElementById('events');
    events.innerHTML = '';
    var caption = document.getElementById('caption');
    var steps = view.steps || [];
    body.dataset.busy = '1';
    if (steps.length) {
      document.getElementById('prompt').textContent = 'The game moves on:';
      document.getElementById('drawn').style.display = 'none';  // the next rug is not drawn yet
    }
    var i = 0;
    function next() {
      if (i >= steps.length) {
        caption.textContent = '';
        body.dataset.busy = '0';
        render(view);
        return;
      }
      var s = steps[i++];
      board.innerHTML = s.board;
      drawOverlay(s.overlay);
      caption.textContent = s.caption;
      var li = document.createElement('li'); li.textContent = s.caption; events.appendChild(li);
      setTimeout(next, DELAY);
    }
    next();
  }

  // ------------------------------------------------------------ talking to the server

  function say(text, kind) {
    var m = document.getElementById('message');
    m.textContent = text;
    m.className = kind || '';
  }
  function refuse(text) {
    say(text, 'refused');
    body.dataset.refusals = String(parseInt(body.dataset.refusals, 10) + 1);
  }
  function call(method, url, data, then) {
    var opts = {method: method, headers: {'Content-Type': 'application/json'}};
    if (data !== undefined) { opts.body = JSON.stringify(data); }
    body.dataset.busy = '1';
    return fetch(url, opts).then(function (r) {
      return r.json().then(function (j) { return [r.status, j]; });
    }).then(function (rj) {
      body.dataset.busy = '0';
      if (rj[0] !== 200) { refuse(rj[1].error); return; }
      then(rj[1]);
    }).catch(function (e) { body.dataset.busy = '0'; refuse('no answer from the game: ' + e); });
  }
  function waiting() {
    if (body.dataset.busy !== '1') { return false; }
    refuse('wait: the other seats are still moving');
    return true;
  }
  function move(data) {
    if (waiting()) { return; }
    say('');
    call('POST', '/api/choose', data, show);
  }

  // ------------------------------------------------------------ the person's clicks

  function squareAt(evt) {
    var svg = board.querySelector('svg');
    var pt = svg.createSVGPoint();
    pt.x = evt.clientX; pt.y = evt.clientY;
    var p = pt.matrixTransform(svg.getScreenCTM().inverse());
    var g = geo();
    var x = Math.floor((p.x - g.margin) / g.square), y = Math.floor((p.y - g.margin) / g.square);
    return (x >= 0 && y >= 0 && x < g.n && y < g.n) ? [x, y] : null;
  }
  board.addEventListener('mousemove', function (evt) {
    if (G && G.phase === 'place' && body.dataset.busy !== '1') { redraw(squareAt(evt)); }
  });
  board.addEventListener('click', function (evt) {
    if (!G || waiting()) { return; }
    var q = squareAt(evt);
    if (G.phase === 'over') { refuse('the game is over: no more moves'); return; }
    if (G.phase === 'orient') {
      refuse('choose a rotation first: left, straight on or right (point at a button ' +
             'to see Assam\'s walks)');
      return;
    }
    if (!q) { refuse('that is not a square of the board'); return; }
    if (selected) {
      if (same(q, selected)) {
        selected = null; say('square ' + q + ' let go'); redraw(q); return;
      }
      var pairs = containing(selected).filter(function (p) {
        return same(p[0], q) || same(p[1], q);
      });
      if (!pairs.length) {
        refuse(selected + '-' + q + ' is not a legal placement: click a highlighted square ' +
               'beside ' + selected + ', or ' + selected + ' again to let it go');
        return;
      }
      move({placement: [selected, q]});
      return;
    }
    if (!containing(q).length) {
      refuse('no legal placement covers ' + q + ': a rug goes on two squares, one of them ' +
             'next to Assam, never on his square (dashed: the squares you can use)');
      return;
    }
    selected = q;
    body.dataset.selected = q.join(',');
    say('now click the second square of the rug');
    redraw(q);
  });
  [['rot-left', -1], ['rot-straight', 0], ['rot-right', 1]].forEach(function (b) {
    var button = document.getElementById(b[0]);
    button.addEventListener('mouseenter', function () { hovered = b[1]; redraw(null); });
    button.addEventListener('focus', function () { hovered = b[1]; redraw(null); });
    button.addEventListener('mouseleave', function () { hovered = null; redraw(null); });
    button.addEventListener('click', function () { move({rotation: b[1]}); });
  });
  document.getElementById('undo').addEventListener('click', function () {
    if (waiting()) { return; }
    call('POST', '/api/undo', undefined, function (v) {
      say('your last choice is taken back'); show(v);
    });
  });
  document.getElementById('hint').addEventListener('click', function () {
    if (waiting()) { return; }
    call('GET', '/api/hint', undefined, function (h) {
      say(h.hint, 'hint');
      if (h.move.rotation !== undefined) { hovered = h.move.rotation; redraw(null); }
      else { selected = h.move.placement[0]; redraw(h.move.placement[1]); }
    });
  });
  document.getElementById('new-game').addEventListener('click', function () {
    if (waiting()) { return; }
    call('POST', '/api/new', undefined, function (v) {
      body.dataset.games = String(parseInt(body.dataset.games, 10) + 1);
      say('a new game'); show(v);
    });
  });
  document.addEventListener('keydown', function (e) {
    var r = {l: -1, s: 0, r: 1}[e.key];
    if (r !== undefined) { move({rotation: r}); }
    else if (e.key === 'u') { document.getElementById('undo').click(); }
    else if (e.key === 'h') { document.getElementById('hint').click(); }
  });
  call('GET', '/api/state', undefined, show);
})();
"""


def page_html(title: str) -> str:
    """The play page (its data comes from the server's /api routes)."""
    return f"""{page_head(title, _STYLE)}<body data-phase="" data-busy="1" data-games="1">
<h1>{escape(title)}</h1>
<div class="wrap">
  <div id="board"></div>
  <div class="side">
    <p class="ask"><span id="drawn"></span><span id="prompt"></span></p>
    <div class="buttons">
      <button id="rot-left" type="button" title="turn Assam left (L)">⟲ left</button>
      <button id="rot-straight" type="button" title="keep Assam straight on (S)">
        ↑ straight on</button>
      <button id="rot-right" type="button" title="turn Assam right (R)">⟳ right</button>
    </div>
    <div class="buttons">
      <button id="hint" type="button" title="ask the hint strategy (H)">hint</button>
      <button id="undo" type="button" title="take your last choice back (U)">undo</button>
      <button id="new-game" type="button" style="display: none"
        title="start another game against the same seats">new game</button>
    </div>
    <div id="message" role="status"></div>
    <div id="caption"></div>
    <ol id="events"></ol>
    <div id="result"></div>
    <ul id="moves"></ul>
  </div>
</div>
<script>{_SCRIPT}</script>
</body>
</html>
"""
