"""The page and its JSON routes, on one local address.

Routes (bottle): `GET /` the page; `GET /api/state` the view (as for a page opened now);
`POST /api/choose` with {"rotation": r} or {"placement": [[x1, y1], [x2, y2]]}; `POST
/api/undo`; `GET /api/hint`. A refused move answers 400 with {"error": message} and
changes nothing.
The standard library's WSGI server serves them, one request at a time (one person, one
game: the game's state is never touched by two requests at once).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bottle

from marrakech_sim.errors import MarrakechError
from marrakech_sim.web.page import page_html
from marrakech_sim.web.session import Refused, WebGame


class _Quiet(WSGIRequestHandler):
    """No line per request on stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def app(game: WebGame) -> bottle.Bottle:
    """The WSGI application serving `game`."""
    web = bottle.Bottle()

    def answer(make: Callable[[], dict[str, Any]]) -> str:
        bottle.response.content_type = "application/json"
        try:
            return json.dumps(make())
        except Refused as exc:
            bottle.response.status = 400
            return json.dumps({"error": str(exc)})
        except MarrakechError as exc:
            bottle.response.status = 500
            return json.dumps({"error": str(exc)})

    def index() -> str:
        return page_html(f"Marrakech: {', '.join(game.names)}")

    def icon() -> str:
        bottle.response.status = 204
        return ""

    def choose() -> str:
        try:
            data = json.loads(bottle.request.body.read() or b"null")
        except ValueError:
            data = None
        return answer(lambda: game.choose(data))

    web.route("/", "GET", index)
    web.route("/favicon.ico", "GET", icon)
    web.route("/api/state", "GET", lambda: answer(lambda: game.view(reload=True)))
    web.route("/api/choose", "POST", choose)
    web.route("/api/undo", "POST", lambda: answer(game.undo))
    web.route("/api/hint", "GET", lambda: answer(game.hint))
    return web


def serve(game: WebGame, host: str = "127.0.0.1", port: int = 0) -> WSGIServer:
    """A server for `game` bound to host:port (0: any free port), not yet serving:
    call `serve_forever()` (or `start_in_thread`), and `shutdown()` to stop."""
    return make_server(host, port, app(game), handler_class=_Quiet)


def start_in_thread(server: WSGIServer) -> threading.Thread:
    """Serve in a daemon thread (for tests and notebooks); `server.shutdown()` stops it."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


def url_of(server: WSGIServer) -> str:
    """The page's address."""
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/"
