#!/usr/bin/env python3
"""The client that test_proxy.py runs inside the sandbox (and, as the control, on the host).

    python3 proxy_client.py '[["http", "http://web.test:8080/"], ["socks", "web.test", 9000, "hi"]]'

Takes a JSON list of actions, runs them in order, prints a JSON list of results (one object
each; {"error": ...} if the action raised). Standard library only: the sandbox has the
system's python3 and nothing else.

  ["http", URL, {HEADER: VALUE}?]       urllib with the proxies of the environment
                                         -> {"status", "body"} or {"error"}
  ["raw_http", TEXT]                     TEXT (\\r\\n as written) to 127.0.0.1:3128 as is
                                         -> {"status", "body"} or {"error"}
  ["keepalive", [TEXT, ...]]             each TEXT on one connection to 127.0.0.1:3128, one
                                         after the other, each after the answer to the last
                                         (read by Content-Length) -> {"answers": [...]}
  ["flood", N]                           N refused CONNECTs, one connection each -> {"sent"}
  ["connect", HOST, PORT, MESSAGE]       CONNECT HOST:PORT on 127.0.0.1:3128, then MESSAGE
                                         through the tunnel -> {"status", "body"|"echo"}
  ["socks", HOST, PORT, MESSAGE, ATYP?]  SOCKS5 on 127.0.0.1:1080: greeting 05 01 00, CONNECT
                                         with ATYP 3 (a name, the default) or 1 (IPv4)
                                         -> {"method", "reply", "echo"?}
  ["socks_greeting", HEX]                a raw greeting -> {"answer": hex}
  ["direct", HOST, PORT]                 a plain TCP connect -> {"result": "ok" | errno name}
  ["udp", HOST, PORT]                    a UDP datagram -> {"result": "ok" | errno name}
  ["dns", NAME]                          getaddrinfo -> {"result": "ok" | the error}
  ["env"]                                the *_proxy variables -> {"env": {...}}
  ["tcp_listeners"]                      listening TCP ports of this network namespace
  ["socket_fds"]                         how many of this process's fds are sockets
  ["bind_and_listen"]                    bind 127.0.0.1:0; listen() without bind (the kernel
                                         picks a port) and connect to it
                                         -> {"bind", "listen", "connect"}
"""
import errno
import json
import os
import socket
import struct
import sys
import urllib.error
import urllib.request

TIMEOUT = 10
BRIDGE_HTTP = ("127.0.0.1", 3128)
BRIDGE_SOCKS = ("127.0.0.1", 1080)


def errname(e):
    if isinstance(e, OSError) and e.errno and e.errno > 0:
        return errno.errorcode.get(e.errno, str(e.errno))
    return f"{type(e).__name__}: {e}"


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def recv_all(s):
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


def recv_head(s):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = s.recv(1)
        if not chunk:
            break
        data += chunk
    return data


def status_of(head):
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split()
    return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None


def http(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as r:
            return {"status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read().decode()}
    except urllib.error.URLError as e:
        return {"error": errname(e.reason) if isinstance(e.reason, OSError) else str(e.reason)}


def raw_http(text):
    with socket.create_connection(BRIDGE_HTTP, timeout=TIMEOUT) as s:
        s.sendall(text.encode())
        data = recv_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    return {"status": status_of(head), "body": body.decode(errors="replace")}


def read_response(s, buffered):
    """One response (head and Content-Length body) -> (status, body, leftover) or None."""
    data = buffered
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status_of(head), rest[:length].decode(errors="replace"), rest[length:]


def keepalive(texts):
    answers = []
    with socket.create_connection(BRIDGE_HTTP, timeout=TIMEOUT) as s:
        leftover = b""
        for text in texts:
            try:
                s.sendall(text.encode())
                response = read_response(s, leftover)
            except OSError as e:
                answers.append({"error": errname(e)})
                break
            if response is None:
                answers.append({"error": "closed"})
                break
            status, body, leftover = response
            answers.append({"status": status, "body": body})
    return {"answers": answers}


def flood(n):
    for i in range(n):
        with socket.create_connection(BRIDGE_HTTP, timeout=TIMEOUT) as s:
            s.sendall(f"CONNECT flood{i}.test:443 HTTP/1.1\r\n\r\n".encode())
            recv_all(s)
    return {"sent": n}


def tunnel_echo(s, message):
    s.sendall(message.encode())
    s.shutdown(socket.SHUT_WR)
    return recv_all(s).decode(errors="replace")


def connect(host, port, message):
    with socket.create_connection(BRIDGE_HTTP, timeout=TIMEOUT) as s:
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
        head = recv_head(s)
        status = status_of(head)
        if status == 200:
            return {"status": status, "echo": tunnel_echo(s, message)}
        return {"status": status, "body": recv_all(s).decode(errors="replace")}


def socks(host, port, message, atyp=3):
    with socket.create_connection(BRIDGE_SOCKS, timeout=TIMEOUT) as s:
        s.sendall(b"\x05\x01\x00")
        method = recv_exact(s, 2)
        out = {"method": method.hex()}
        if method != b"\x05\x00":
            return out
        if atyp == 1:
            address = b"\x01" + socket.inet_aton(host)
        else:
            name = host.encode()
            address = b"\x03" + bytes([len(name)]) + name
        s.sendall(b"\x05\x01\x00" + address + struct.pack(">H", port))
        reply = recv_exact(s, 4)
        out["reply"] = reply[1] if len(reply) >= 2 else None
        if len(reply) == 4:
            bound = {1: 4 + 2, 4: 16 + 2}.get(reply[3])
            if reply[3] == 3:
                bound = recv_exact(s, 1)[0] + 2
            recv_exact(s, bound or 0)
        if out["reply"] == 0:
            out["echo"] = tunnel_echo(s, message)
        return out


def socks_greeting(hex_bytes):
    with socket.create_connection(BRIDGE_SOCKS, timeout=TIMEOUT) as s:
        s.sendall(bytes.fromhex(hex_bytes))
        return {"answer": recv_all(s).hex()}


def direct(host, port):
    try:
        with socket.create_connection((host, port), timeout=TIMEOUT):
            return {"result": "ok"}
    except OSError as e:
        return {"result": errname(e)}


def udp(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.sendto(b"\0" * 12, (host, port))
            return {"result": "ok"}
        except OSError as e:
            return {"result": errname(e)}


def dns(name):
    try:
        socket.getaddrinfo(name, 443, proto=socket.IPPROTO_TCP)
        return {"result": "ok"}
    except OSError as e:
        return {"result": errname(e)}


def env():
    return {"env": {k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")}}


def tcp_listeners():
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return {"ports": sorted(ports)}


def socket_fds():
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                count += 1
        except OSError:
            pass
    return {"sockets": count}


def bind_and_listen():
    out = {}
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", 0))
            out["bind"] = "ok"
        except OSError as e:
            out["bind"] = errname(e)
    with socket.socket() as listener:
        try:
            listener.listen(1)
        except OSError as e:
            out["listen"] = errname(e)
            return out
        out["listen"] = "ok"
        port = listener.getsockname()[1]
        with socket.socket() as c:
            c.settimeout(TIMEOUT)
            try:
                c.connect(("127.0.0.1", port))
                out["connect"] = "ok"
            except OSError as e:
                out["connect"] = errname(e)
    return out


ACTIONS = {"http": http, "raw_http": raw_http, "keepalive": keepalive, "flood": flood,
           "connect": connect, "socks": socks, "socks_greeting": socks_greeting,
           "direct": direct, "udp": udp, "dns": dns, "env": env,
           "tcp_listeners": tcp_listeners, "socket_fds": socket_fds,
           "bind_and_listen": bind_and_listen}


def main():
    results = []
    for action in json.loads(sys.argv[1]):
        try:
            results.append(ACTIONS[action[0]](*action[1:]))
        except Exception as e:  # noqa: BLE001 - reported to the test, which decides
            results.append({"error": errname(e)})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
