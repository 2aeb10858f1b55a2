#!/usr/bin/env python3
"""A vigil client for Python 3, standard library only: drives `vigil serve` (JSON-RPC 2.0,
one JSON object per line; docs/protocol.md).

    with VigilSession(settings="sandbox.json", workspace="/work") as s:
        r = s.run(["make", "test"], cwd="/work/sub", on_output=lambda stream, data: ...)
        r["exit_code"], r["annotation"], r["violations"], r["command"]
        s.update_policy(add=["pypi.org"])
        s.on_ask = lambda ask: "once"  # ask mode: once / session / always / deny

The session's workspace (its writable root) is the directory `vigil serve` starts in:
`workspace`, else this process's cwd. It is fixed for the session: a command's `cwd`
(default: the workspace) must lie inside it, or the run is refused (VigilError).

As a program it runs one command like `vigil run` does:
    vigil_client.py [--vigil BIN] [--settings F] [--log L] [--allow DOMAIN]...
                    [--answer once|session|always|deny|none] -- CMD ARGS...
"""
import base64
import itertools
import json
import subprocess
import sys
import threading


def _bytes(value):
    """A byte string of the protocol: text, or {"b64": ...} when it is not UTF-8."""
    if isinstance(value, dict):
        return base64.b64decode(value["b64"])
    return value.encode("utf-8", "surrogateescape")


class VigilError(Exception):
    pass


class VigilSession:
    def __init__(self, vigil="vigil", settings=None, log=None, extra_args=(), workspace=None):
        argv = [vigil, "serve"]
        if settings:
            argv += ["--settings", settings]
        if log:
            argv += ["--log", log]
        argv += list(extra_args)
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          cwd=workspace)
        except FileNotFoundError:
            raise VigilError("cannot run %s: not found on PATH. Install vigil (see its README) or give "
                             "its path (--vigil BIN on the command line, vigil='/path/to/vigil' in "
                             "code)" % vigil) from None
        except OSError as e:
            raise VigilError("cannot run %s: %s" % (vigil, e.strerror)) from None
        self._ids = itertools.count(1)
        self._lock, self._wlock = threading.Lock(), threading.Lock()
        self._pending = {}  # request id -> [event, reply]
        self._output = {}  # request id -> on_output callback
        self.on_event = None  # called with (command id, record) for every log record
        self.on_ask = None  # called with an ask's params; the answer, or None: no answer
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._proc.stdout:
            msg = json.loads(line)
            if "id" in msg and "method" not in msg:
                with self._lock:
                    slot = self._pending.get(msg["id"])
                if slot:
                    slot[1] = msg
                    slot[0].set()
            elif msg.get("method") == "output":
                p = msg["params"]
                with self._lock:
                    cb = self._output.get(p["request"])
                if cb:
                    cb(p["stream"], _bytes(p["data"]))
            elif msg.get("method") == "event" and self.on_event:
                self.on_event(msg["params"].get("command"), msg["params"]["record"])
            elif msg.get("method") == "ask":
                answer = self.on_ask(msg["params"]) if self.on_ask else "deny"
                if answer:
                    self._send({"id": msg["id"], "result": {"answer": answer}})
        with self._lock:  # vigil is gone: nobody will answer
            for slot in self._pending.values():
                slot[0].set()

    def call(self, method, params, on_output=None):
        rid = next(self._ids)
        slot = [threading.Event(), None]
        with self._lock:
            self._pending[rid] = slot
            if on_output:
                self._output[rid] = on_output
        self._send({"id": rid, "method": method, "params": params})
        slot[0].wait()
        with self._lock:
            del self._pending[rid]
            self._output.pop(rid, None)
        reply = slot[1]
        if reply is None:
            raise VigilError("vigil serve exited")
        if "error" in reply:
            raise VigilError(reply["error"]["message"])
        return reply["result"]

    def _send(self, msg):
        with self._wlock:
            self._proc.stdin.write(json.dumps(dict(msg, jsonrpc="2.0")).encode() + b"\n")
            self._proc.stdin.flush()

    def run(self, argv, cwd=None, env=None, stdin=None, timeout=None, on_output=None):
        params = {"argv": list(argv)}
        for key, value in (("cwd", cwd), ("env", env), ("stdin", stdin), ("timeout", timeout)):
            if value is not None:
                params[key] = value
        return self.call("run", params, on_output)

    def start(self, argv, cwd=None, env=None, stdin=None, timeout=None):
        """A background command: returns its status ({"handle": "bg-N", ...}) at once."""
        params = {"argv": list(argv), "background": True}
        for key, value in (("cwd", cwd), ("env", env), ("stdin", stdin), ("timeout", timeout)):
            if value is not None:
                params[key] = value
        return self.call("run", params)

    def output(self, handle, offset=0):
        """Its output from `offset` ("data", "next_offset"; "dropped" when no longer kept)."""
        r = self.call("output", {"handle": handle, "offset": offset})
        r["data"] = _bytes(r["data"])
        return r

    def wait(self, handle, timeout_ms=0):
        return self.call("wait", {"handle": handle, "timeout": timeout_ms})

    def kill(self, handle):
        return self.call("kill", {"handle": handle})["killed"]

    def background(self):
        return self.call("list", {})["commands"]

    def update_policy(self, add=(), remove=()):
        return self.call("policy.update", {"add": list(add), "remove": list(remove)})

    def close(self):
        self._proc.stdin.close()
        return self._proc.wait()

    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.close()


def main(args):
    opts = {"vigil": "vigil", "settings": None, "log": None, "answer": "deny"}
    allow = []
    while args and args[0] != "--":
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--allow":
            allow.append(value)
        else:
            opts[flag[2:]] = value
    if not args[1:]:
        sys.exit("usage: vigil_client.py [--vigil BIN] [--settings F] [--answer A] -- CMD...")

    def out(stream, data):
        target = sys.stdout if stream == "stdout" else sys.stderr
        target.buffer.write(data)
        target.flush()

    answer = opts.pop("answer")
    with VigilSession(**opts) as s:
        s.on_ask = lambda ask: None if answer == "none" else answer
        if allow:
            s.update_policy(add=allow)
        result = s.run(args[1:], on_output=out)
    # The block is the result's (one per result), printed where `vigil run` prints it.
    if result["annotation"]:
        out("stderr", result["annotation"].encode())
    return result["exit_code"]


def cli():
    """The `vigil-client` command (pyproject.toml): main(), errors as one line."""
    try:
        return main(sys.argv[1:])
    except VigilError as e:
        sys.stderr.write("vigil_client: %s\n" % e)
        return 127 if "not found" in str(e) else 125


if __name__ == "__main__":
    sys.exit(cli())
