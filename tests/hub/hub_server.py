#!/usr/bin/env python3
"""The Hugging Face Hub's file endpoints, served on the loopback from a tree that
tests/hub/hub_repositories.py writes, for the tests of iteragpu's Hub client.

    hub_server.py --root DIR --port-file FILE [--host 127.0.0.1] [--latency-ms 0]

Listens on an ephemeral port, writes it (and a newline) to FILE once listening, and serves
until SIGTERM or SIGINT. Endpoints:
    GET|HEAD /ORG/NAME/resolve/REVISION/PATH   a file of a revision (REVISION quoted, safe="")
    GET|HEAD /cdn/ORG/NAME/COMMIT/PATH         where .safetensors files redirect to, on the
                                               host name "localhost" (a second host)
    GET /_stats, POST /_stats/reset            requests counted, body bytes sent, a request log
The answers carry the headers huggingface_hub reads (X-Repo-Commit, ETag, X-Linked-Etag,
X-Linked-Size, X-Error-Code, X-Error-Message). A repository's repo.json may name a fault
(hub_repositories.FAULTS) that its .safetensors answers show.
"""
import argparse
import http.server
import json
import os
import re
import signal
import socket
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hub_repositories import etag_of  # noqa: E402

IGNORE_RANGE_LENGTH = 10 * 1024 ** 3
STALL_SECONDS = 60
CHUNK = 1 << 20
ZEROS = bytes(CHUNK)
LOG_LIMIT = 10000
COMMIT = re.compile(r"[0-9a-f]{40}")


class HubError(Exception):
    """An error answer: status, message, and the Hub's X-Error-Code where it sends one."""

    def __init__(self, status, message, code=None, headers=None):
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, headers or {}


class HubServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # A client fetching 30 shard headers at once opens 30 connections; socketserver's
    # default backlog of 5 would drop SYNs and add a second of retransmission to each.
    request_queue_size = 128

    def __init__(self, host, root, latency, cdn_host):
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, 0), Handler)
        self.root, self.latency, self.cdn_host = root, latency, cdn_host
        # Set at shutdown: ends latency and stall sleeps at once.
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.reset_stats()

    def reset_stats(self):
        with self.lock:
            self.requests, self.bytes_sent, self.log = 0, 0, []

    def handle_error(self, request, client_address):
        # A client hanging up mid-answer is part of the tests, not an error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "iteragpu-test-hub"

    def log_message(self, format, *args):
        pass

    def log_error(self, format, *args):
        sys.stderr.write("hub_server: %s\n" % (format % args))

    def send_response(self, code, message=None):
        self.status = code
        super().send_response(code, message)

    def end_headers(self):
        super().end_headers()
        self.headers_sent = True

    def do_GET(self):
        self.answer(send_body=True)

    def do_HEAD(self):
        self.answer(send_body=False)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if urllib.parse.urlsplit(self.path).path == "/_stats/reset":
            self.server.reset_stats()
            self.send_json(200, {"reset": True})
        else:
            self.send_json(404, {"error": "Not Found"})

    # --- answering ---------------------------------------------------------------------------

    def answer(self, send_body):
        self.status, self.headers_sent = None, False
        path = urllib.parse.urlsplit(self.path).path
        if path == "/_stats":
            with self.server.lock:
                stats = {"requests": self.server.requests, "bytes_sent": self.server.bytes_sent,
                         "log": list(self.server.log)}
            self.send_json(200, stats, send_body)
            return
        with self.server.lock:
            self.server.requests += 1
        if self.server.latency:
            self.server.stopping.wait(self.server.latency)
        try:
            parts = path.split("/")[1:]
            if len(parts) >= 5 and parts[2] == "resolve":
                self.resolve(parts[0], parts[1], parts[3], parts[4:], send_body)
            elif len(parts) >= 5 and parts[0] == "cdn":
                self.cdn(parts[1], parts[2], parts[3], parts[4:], send_body)
            else:
                raise HubError(404, "Not Found")
        except HubError as e:
            if not self.headers_sent:
                headers = dict(e.headers)
                if e.code:
                    headers.update({"X-Error-Code": e.code, "X-Error-Message": e.message})
                self.send_json(e.status, {"error": e.message}, send_body, headers)
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as e:
            self.log_error("%s %s: %s: %s", self.command, self.path, type(e).__name__, e)
            if self.headers_sent:
                self.close_connection = True
            else:
                self.send_json(500, {"error": "%s: %s" % (type(e).__name__, e)}, send_body)
        finally:
            entry = {"method": self.command, "path": self.path, "range": self.headers.get("Range"),
                     "authorization": "Authorization" in self.headers, "status": self.status}
            with self.server.lock:
                if len(self.server.log) < LOG_LIMIT:
                    self.server.log.append(entry)

    def send_json(self, status, value, send_body=True, headers=None):
        body = json.dumps(value).encode()
        self.send_response(status)
        for name, text in (headers or {}).items():
            self.send_header(name, text)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    # --- the endpoints -----------------------------------------------------------------------

    def repository(self, org, name):
        """The repository's folder and repo.json, or None."""
        org, name = urllib.parse.unquote(org), urllib.parse.unquote(name)
        if any(p in ("", ".", "..") or "/" in p or "\\" in p for p in (org, name)):
            return None, None
        folder = os.path.join(self.server.root, org, name)
        try:
            with open(os.path.join(folder, "repo.json")) as f:
                return folder, json.load(f)
        except FileNotFoundError:
            return None, None

    def resolve(self, org, name, revision, path_parts, send_body):
        folder, meta = self.repository(org, name)
        repo_id = "%s/%s" % (urllib.parse.unquote(org), urllib.parse.unquote(name))
        if meta is None:
            raise HubError(404, "Repository Not Found for url: http://%s%s."
                           % (self.headers.get("Host", ""), self.path), "RepoNotFound")
        if meta.get("gated"):
            self.check_access(repo_id, meta)
        revision = urllib.parse.unquote(revision)
        commit = meta["refs"].get(revision)
        if commit is None and COMMIT.fullmatch(revision) and os.path.isdir(os.path.join(folder, revision)):
            commit = revision
        if commit is None:
            raise HubError(404, "Invalid rev id: %s" % revision, "RevisionNotFound")
        relpath = self.relative_path(path_parts)
        fault = meta.get("fault")
        headers = {} if fault == "no_commit" else {"X-Repo-Commit": commit}
        file = self.file_in(os.path.join(folder, commit), relpath)
        if file is None:
            raise HubError(404, "Entry not found", "EntryNotFound", headers)
        etag = etag_of(file, relpath)
        headers["ETag"] = '"%s"' % etag
        lfs = relpath.endswith(".safetensors")
        if not lfs:
            self.send_file(file, headers, send_body)
            return
        headers["X-Linked-Etag"] = '"%s"' % etag
        headers["X-Linked-Size"] = str(os.path.getsize(file))
        if fault == "stall":
            self.server.stopping.wait(STALL_SECONDS)
        if fault == "redirect_loop":
            self.redirect("http://%s%s" % (self.headers.get("Host", ""), self.path), headers)
        elif meta.get("lfs_redirect"):
            port = self.server.server_address[1]
            cdn_path = "/".join(urllib.parse.quote(p, safe="") for p in (org, name, commit, *relpath.split("/")))
            self.redirect("http://%s:%d/cdn/%s" % (self.server.cdn_host, port, cdn_path), headers)
        else:
            self.send_file(file, headers, send_body, fault)

    def cdn(self, org, name, commit, path_parts, send_body):
        # The client must drop the token when a redirect leaves the Hub's host.
        if "Authorization" in self.headers:
            raise HubError(400, "Authorization header sent to the CDN host")
        folder, meta = self.repository(org, name)
        relpath = self.relative_path(path_parts)
        file = None
        if meta is not None and COMMIT.fullmatch(commit):
            file = self.file_in(os.path.join(folder, commit), relpath)
        if file is None:
            raise HubError(404, "Not Found")
        headers = {"ETag": '"%s"' % etag_of(file, relpath)}
        self.send_file(file, headers, send_body, meta.get("fault") if relpath.endswith(".safetensors") else None)

    def check_access(self, repo_id, meta):
        authorization = self.headers.get("Authorization", "")
        if not authorization.startswith("Bearer "):
            raise HubError(401, "Access to model %s is restricted. You must have access to it and be "
                           "authenticated to access it. Please log in." % repo_id, "GatedRepo")
        if authorization[len("Bearer "):].strip() not in meta.get("tokens", []):
            raise HubError(403, "Access to model %s is restricted and you are not in the authorized "
                           "list. Visit https://huggingface.co/%s to ask for access." % (repo_id, repo_id),
                           "GatedRepo")

    @staticmethod
    def relative_path(path_parts):
        """The file's path inside the commit; 400 for one that could leave it."""
        relpath = urllib.parse.unquote("/".join(path_parts))
        if any(p in ("", ".", "..") for p in relpath.split("/")) or "\\" in relpath or "\0" in relpath:
            raise HubError(400, "Invalid path: %s" % relpath)
        return relpath

    @staticmethod
    def file_in(commit_folder, relpath):
        """The file, if it exists and (symlinks resolved) lies inside the commit's folder."""
        file = os.path.join(commit_folder, *relpath.split("/"))
        real_folder = os.path.realpath(commit_folder)
        if not os.path.realpath(file).startswith(real_folder + os.sep) or not os.path.isfile(file):
            return None
        return file

    def redirect(self, location, headers):
        self.send_response(302)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    # --- bodies ------------------------------------------------------------------------------

    def parse_range(self, size):
        """(start, end) inclusive for a single satisfiable range, None for no (or an unusable)
        Range header, which is answered with the whole file; HubError 416 when unsatisfiable."""
        m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", self.headers.get("Range", ""))
        if not m or (not m.group(1) and not m.group(2)):
            return None
        if not m.group(1):  # bytes=-N: the last N bytes
            if int(m.group(2)) == 0:
                raise HubError(416, "Range Not Satisfiable", headers={"Content-Range": "bytes */%d" % size})
            return max(0, size - int(m.group(2))), size - 1
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) else None
        if end is not None and end < start:
            return None
        if start >= size:
            raise HubError(416, "Range Not Satisfiable", headers={"Content-Range": "bytes */%d" % size})
        return start, size - 1 if end is None else min(end, size - 1)

    def send_file(self, file, headers, send_body, fault=None):
        size = os.path.getsize(file)
        if fault == "ignore_range":
            self.send_headers(200, headers, IGNORE_RANGE_LENGTH)
            if send_body:
                sent = self.copy(file, 0, size)
                while sent < IGNORE_RANGE_LENGTH:
                    n = min(CHUNK, IGNORE_RANGE_LENGTH - sent)
                    self.write(ZEROS[:n] if n < CHUNK else ZEROS)
                    sent += n
            return
        asked = self.parse_range(size)
        if asked is None:
            status, start, length = 200, 0, size
        else:
            start, end = asked
            if fault == "wrong_content_range":
                start, end = min(start + 1, size - 1), min(end + 1, size - 1)
            status, length = 206, end - start + 1
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, end, size)
        self.send_headers(status, headers, length)
        if not send_body:
            return
        if fault == "truncated":
            self.copy(file, start, length // 2)
            self.close_connection = True
        else:
            self.copy(file, start, length)

    def send_headers(self, status, headers, length):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        content_type = "application/json" if self.path.endswith(".json") else "application/octet-stream"
        self.send_header("Content-Type", content_type)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def copy(self, file, start, length):
        """Sends length bytes of file from start (zeros past its end); returns length."""
        with open(file, "rb") as f:
            f.seek(start)
            left = length
            while left:
                chunk = f.read(min(CHUNK, left)) or ZEROS[:min(CHUNK, left)]
                self.write(chunk)
                left -= len(chunk)
        return length

    def write(self, data):
        self.wfile.write(data)
        with self.server.lock:
            self.server.bytes_sent += len(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the tree hub_repositories.py wrote")
    parser.add_argument("--port-file", required=True, help="written with the port once listening")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cdn-host", default="localhost",
                        help="the host name redirects to the CDN use (another name for --host)")
    parser.add_argument("--latency-ms", type=float, default=0, help="a wait before every answer")
    args = parser.parse_args()

    server = HubServer(args.host, os.path.abspath(args.root), args.latency_ms / 1000, args.cdn_host)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    # serve_forever runs in a thread so that the main thread can call shutdown().
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(args.port_file + ".tmp", "w") as out:
        out.write("%d\n" % server.server_address[1])
    os.replace(args.port_file + ".tmp", args.port_file)
    stop.wait()  # a signal wakes it: lock waits are interruptible on POSIX
    server.stopping.set()
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
