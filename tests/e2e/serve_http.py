#!/usr/bin/env python3
"""serve_http.py - the HTTP side of tests/e2e/test_serve.sh: request bodies, requests (including a huge
body and a client that hangs up right after sending), and reading answers. Standard library only.

  serve_http.py body [--request-id R] [--verdicts V] [--priority N] [--reward K] PROBLEM:FILE[:RID]...
  serve_http.py req METHOD URL [BODYFILE] [--token T] [--huge BYTES] [--disconnect]
      prints "STATUS RETRY_AFTER" on the first line (RETRY_AFTER "-" when absent), the body on the second
  serve_http.py get ANSWERFILE EXPR     prints EXPR, a Python expression over j (the answer's JSON)
"""
import http.client
import json
import socket
import sys
import urllib.parse


def body(args):
    top, cands = {}, []
    it = iter(args)
    for a in it:
        if a == "--request-id":
            top["request_id"] = next(it)
        elif a == "--verdicts":
            top["verdicts"] = next(it)
        elif a == "--priority":
            top["priority"] = int(next(it))
        elif a == "--reward":
            top["reward"] = next(it)
        else:
            parts = a.split(":")
            c = {"problem": parts[0], "source": open(parts[1]).read()}
            if len(parts) > 2:
                c["request_id"] = parts[2]
            cands.append(c)
    top["candidates"] = cands
    print(json.dumps(top))


def req(args):
    method, url = args[0], args[1]
    rest = args[2:]
    data, token, huge, disconnect = None, None, 0, False
    it = iter(rest)
    for a in it:
        if a == "--token":
            token = next(it)
        elif a == "--huge":
            huge = int(next(it))
        elif a == "--disconnect":
            disconnect = True
        else:
            data = open(a, "rb").read()
    if huge:
        data = b"{" + b" " * (huge - 2) + b"}"
    u = urllib.parse.urlsplit(url)
    path = u.path + ("?" + u.query if u.query else "")
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    if disconnect:
        # the whole request, then the socket closes before any answer: the server must judge anyway
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        head = "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n" % (method, path, u.netloc, len(data or b""))
        head += "".join("%s: %s\r\n" % kv for kv in headers.items()) + "\r\n"
        s.sendall(head.encode() + (data or b""))
        s.close()
        print("sent -")
        print("{}")
        return
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.putrequest(method, path)
    for k, v in headers.items():
        c.putheader(k, v)
    if data is not None:
        c.putheader("Content-Length", str(len(data)))
    c.endheaders()
    if data is not None:
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a server that refused the body early closes; its answer is still there to read
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    print(r.status, r.getheader("Retry-After") or "-")
    print(text.replace("\n", " "))


def get(args):
    with open(args[0]) as f:
        lines = f.read().split("\n", 1)
    j = json.loads(lines[1]) if len(lines) > 1 and lines[1].strip() else None
    print(eval(args[1], {"j": j, "len": len, "sorted": sorted, "set": set, "all": all, "any": any}))


if __name__ == "__main__":
    {"body": body, "req": req, "get": get}[sys.argv[1]](sys.argv[2:])
