"""The page and its JSON routes, on one local address.

Routes (bottle): `GET /` the page; `GET /api/state` the view (as for a page opened now);
`POST /api/choose` with {"rotation": r} or {"placement": [[x1, y1], [x2, y2]]}; `POST
/api/undo`; `GET /api/hint`; `POST /api/new` a new game once this one is over (saved,
or ended by an opponent's fault: `WebGame.next_game`). A refused move answers 400 with
{"error": message} and changes nothing.
The standard library's WSGI server serves them, one request at a time (one person, one
game: the game's state is never touched by two requests at once).
"""

from __future__ import annotations

import json
import signal
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


class Games:
    """The games one server plays in turn: `current`, and a new one once it is over."""

    def __init__(self, first: WebGame) -> None:
        self.current = first
        self.played = [first]

    def new(self) -> dict[str, Any]:
        """Start the next game (refused while the current one is not over); its view."""
        if self.current.phase != "over":
            raise Refused("finish this game first (or undo): a new game starts once it is over")
        self.current = self.played[0].next_game(len(self.played) + 1)
        self.played.append(self.current)
        return self.current.view()


def app(games: WebGame | Games) -> bottle.Bottle:
    """The WSGI application serving `games` (a game: that one, then new ones)."""
    table = games if isinstance(games, Games) else Games(games)
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
        return page_html(f"Marrakech: {', '.join(table.current.names)}")

    def icon() -> str:
        bottle.response.status = 204
        return ""

    def choose() -> str:
        try:
            data = json.loads(bottle.request.body.read() or b"null")
        except ValueError:
            data = None
        return answer(lambda: table.current.choose(data))

    web.route("/", "GET", index)
    web.route("/favicon.ico", "GET", icon)
    web.route("/api/state", "GET", lambda: answer(lambda: table.current.view(reload=True)))
    web.route("/api/choose", "POST", choose)
    web.route("/api/undo", "POST", lambda: answer(lambda: table.current.undo()))
    web.route("/api/hint", "GET", lambda: answer(lambda: table.current.hint()))
    web.route("/api/new", "POST", lambda: answer(table.new))
    return web


class _Server(WSGIServer):
    """A WSGI server that stops between requests when asked (`serve_until_ctrl_c`)."""

    handling = False  # a request is being answered
    stopping = False  # stop once it is

    def process_request(self, request: Any, client_address: Any) -> None:
        self.handling = True
        try:
            super().process_request(request, client_address)
        finally:
            self.handling = False

    def service_actions(self) -> None:  # (serve_forever's loop, between requests)
        if self.stopping:
            raise KeyboardInterrupt


def serve(games: WebGame | Games, host: str = "127.0.0.1", port: int = 0) -> WSGIServer:
    """A server for `games` bound to host:port (0: any free port), not yet serving:
    call `serve_forever()` (or `start_in_thread`), and `shutdown()` to stop."""
    return make_server(host, port, app(games), server_class=_Server, handler_class=_Quiet)


def serve_until_ctrl_c(server: WSGIServer) -> None:
    """Serve until Ctrl-C (KeyboardInterrupt out of here), in the main thread.

    Ctrl-C in the middle of a request stops the server once the request is answered: a
    KeyboardInterrupt raised inside one would be taken by the WSGI handler as that
    request's error (and the server would go on), or inside an opponent's decision as
    that opponent's fault."""

    def ctrl_c(signum: int, frame: Any) -> None:
        if isinstance(server, _Server) and server.handling:
            server.stopping = True
            return
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, ctrl_c)
    try:
        server.serve_forever()
    finally:
        signal.signal(signal.SIGINT, previous)


def start_in_thread(server: WSGIServer) -> threading.Thread:
    """Serve in a daemon thread (for tests and notebooks); `server.shutdown()` stops it."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


def url_of(server: WSGIServer) -> str:
    """The page's address."""
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/"
