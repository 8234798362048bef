"""The HTTP server of the assembled application: forwarded headers only from trusted proxies.

Tornado's ``xheaders`` trusts ``X-Real-IP``, ``X-Forwarded-For``, ``X-Scheme`` and ``X-Forwarded-Proto``
from every peer, so any client could pose as any address (the account web throttles sign-ins per
address) or scheme. Here they are read only on connections from ``CTIWIRE_TRUSTED_PROXIES`` (addresses
or networks, comma-separated); every other peer is taken as it connects.
"""

from __future__ import annotations

import ipaddress

from tornado import httputil
from tornado.httpserver import HTTPServer, _ProxyAdapter
from tornado.web import Application

from config.settings import Network, parse_networks


class ProxyAwareServer(HTTPServer):
    """An HTTPServer that applies forwarded headers only to connections from ``trusted`` networks."""

    trusted: tuple[Network, ...] = ()

    def start_request(self, server_conn: object, request_conn: httputil.HTTPConnection) -> httputil.HTTPMessageDelegate:
        delegate = super().start_request(server_conn, request_conn)
        if isinstance(delegate, _ProxyAdapter) and not self._trusted(request_conn):
            return delegate.delegate  # an untrusted peer: its X-Forwarded-* headers are ignored
        return delegate

    def _trusted(self, request_conn: httputil.HTTPConnection) -> bool:
        address = getattr(getattr(request_conn, "context", None), "address", None)
        if not isinstance(address, tuple) or not address:
            return False  # a Unix socket or an unknown peer
        try:
            peer = ipaddress.ip_address(address[0])
        except ValueError:
            return False
        return any(peer in network for network in self.trusted)


# Tornado's own limits answer a bare 400 or close the connection. They are raised to these hard
# bounds, so that the service's limits (server.base.request_limit_error: 64 KiB request line and headers,
# 1,000 query fields) are the ones a client meets, with 414, 431 or 400 and the error envelope.
HARD_HEADER_BYTES = 1024 * 1024
HARD_QUERY_FIELDS = 1_000_000


def make_server(app: Application, trusted_proxies: str) -> HTTPServer:
    trusted = parse_networks(trusted_proxies)
    httputil.set_parse_body_config(httputil.ParseBodyConfig(
        urlencoded=httputil.ParseUrlEncodedConfig(max_arguments=HARD_QUERY_FIELDS)))
    server = ProxyAwareServer(app, xheaders=bool(trusted), idle_connection_timeout=60,
                              max_header_size=HARD_HEADER_BYTES)
    server.trusted = trusted
    return server
