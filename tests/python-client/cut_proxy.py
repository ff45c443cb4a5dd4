"""A TCP proxy in front of the gateway that cuts command streams mid-way.

Every connection is passed through byte for byte. A connection whose request
line names a command stream (".../stream") may be given a budget: once that
many bytes went from the gateway to the client, both sides are shut at once,
wherever that falls (inside a frame, as a network cut does). The client is
told nothing; it must notice and resume. Request heads are kept so a test can
check what the client sent."""
import socket
import threading


class CutProxy:
    def __init__(self, upstream_port, cut_after, cuts):
        self.upstream = ("127.0.0.1", upstream_port)
        self.cut_after = cut_after    # gateway-to-client bytes a cut connection gets
        self.cuts_left = cuts         # stream connections still to cut
        self.cuts_done = 0
        self.stream_opens = 0
        self.heads = []               # the first bytes each client sent
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            up = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        first = client.recv(65536)
        budget = None
        with self.lock:
            self.heads.append(first)
            line = first.split(b"\r\n", 1)[0]
            if b"/stream" in line and b"upgrade" in first.lower():
                self.stream_opens += 1
                if self.cuts_left > 0:
                    self.cuts_left -= 1
                    budget = self.cut_after
        up.sendall(first)
        threading.Thread(target=self._pump, args=(client, up, None), daemon=True).start()
        self._pump(up, client, budget)

    def _pump(self, src, dst, budget):
        sent = 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if budget is not None and sent + len(data) >= budget:
                    dst.sendall(data[:budget - sent])
                    with self.lock:
                        self.cuts_done += 1
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.listener.close()
