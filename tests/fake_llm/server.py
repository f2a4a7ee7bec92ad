#!/usr/bin/env python3
# server.py - a scripted stand-in for an LLM endpoint (OpenAI or Anthropic flavour) for the tests:
# a real HTTP server on 127.0.0.1 that answers requests in the order a script gives, and logs them.
"""Usage: server.py SCRIPT.json LOG.json

Binds 127.0.0.1 on an ephemeral port and prints "PORT <n>" as its first stdout line.

SCRIPT is a JSON list (or {"responses": [...]}) of entries, served in order, one per request
(any method and path). An entry may hold:
  status         HTTP status (200)
  headers        {name: value} added to the response
  body           the raw body: a string as is, anything else serialised as JSON
  content        no body given: a chat response with this text (null = "content": null)
  content_bytes  no body given: a chat response whose text is this many bytes of a fixed pattern
  finish_reason  of the generated response ("stop"); Anthropic's stop_reason is derived from it
  prompt_tokens, completion_tokens   usage of the generated response (10, 5)
  format         "openai" (default) or "anthropic": the shape of the generated response
  echo_headers   true: the body is the request's headers as JSON (to test key scrubbing)
  delay          seconds to wait before answering
  hang           true: never answer (until the server stops)
  repeat         serve this entry to that many requests (1)
A request after the script ran out gets 500 {"error": "fake_llm: script exhausted"}.

LOG is rewritten (atomically) when each request arrives, before it is answered:
  {"requests": [{"method", "path", "headers", "body"}], "max_in_flight": n}
body is the parsed JSON when the request body is JSON, else the text.
The server exits when its parent process goes away, so a crashed test leaves nothing running.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATTERN = "0123456789abcdefghijklmnopqrstuvwxyz-stitchbench-fake-llm\n"


def load_script(path):
    with open(path) as f:
        script = json.load(f)
    if isinstance(script, dict):
        script = script.get("responses", [])
    entries = []
    for e in script:
        entries.extend([e] * int(e.get("repeat", 1)))
    return entries


class State:
    def __init__(self, script, log_path):
        self.entries = script
        self.log_path = log_path
        self.lock = threading.Lock()
        self.requests = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.stop = threading.Event()

    def arrive(self, record):
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            index = len(self.requests)
            self.requests.append(record)
            tmp = self.log_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"requests": self.requests, "max_in_flight": self.max_in_flight}, f)
            os.replace(tmp, self.log_path)
            return self.entries[index] if index < len(self.entries) else None

    def leave(self):
        with self.lock:
            self.in_flight -= 1


def generated_body(e):
    if "content_bytes" in e:
        n = int(e["content_bytes"])
        text = (PATTERN * (n // len(PATTERN) + 1))[:n]
    else:
        text = e.get("content", "hello from fake_llm")
    finish = e.get("finish_reason", "stop")
    pt, ct = e.get("prompt_tokens", 10), e.get("completion_tokens", 5)
    if e.get("format") == "anthropic":
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish)
        content = [] if text is None else [{"type": "text", "text": text}]
        return {"id": "msg_fake", "type": "message", "role": "assistant", "content": content,
                "stop_reason": stop, "usage": {"input_tokens": pt, "output_tokens": ct}}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main()

    def log_message(self, fmt, *args):  # quiet: the test's stderr is the client's
        pass

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k: v for k, v in self.headers.items()}
        entry = self.state.arrive({"method": self.command, "path": self.path, "headers": headers, "body": body})
        self.left = False
        try:
            self.answer(entry, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); that is what some tests want
        finally:
            self.leave_once()

    def leave_once(self):
        # Counted out before the response goes: once the client has it, it may start its next
        # request at once, and that one must not overlap this one in max_in_flight.
        if not self.left:
            self.left = True
            self.state.leave()

    def answer(self, e, headers):
        if e is None:
            e = {"status": 500, "body": {"error": "fake_llm: script exhausted"}}
        if e.get("hang"):
            self.state.stop.wait(120)
            self.close_connection = True
            return
        if e.get("delay"):
            time.sleep(float(e["delay"]))
        if e.get("echo_headers"):
            body = json.dumps({"error": {"message": "echo", "headers": headers}})
        elif "body" in e:
            body = e["body"] if isinstance(e["body"], str) else json.dumps(e["body"])
        else:
            body = json.dumps(generated_body(e))
        data = body.encode("utf-8")
        self.send_response(int(e.get("status", 200)))
        for k, v in e.get("headers", {}).items():
            self.send_header(k, str(v))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.leave_once()
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def watch_parent(parent, state):
    while not state.stop.is_set():
        if os.getppid() != parent:
            state.stop.set()
            os._exit(0)
        time.sleep(0.5)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    state = State(load_script(sys.argv[1]), sys.argv[2])
    Handler.state = state
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(sys.argv[2], "w") as f:
        json.dump({"requests": [], "max_in_flight": 0}, f)
    threading.Thread(target=watch_parent, args=(os.getppid(), state), daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
