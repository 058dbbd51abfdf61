#!/usr/bin/env python3
"""prio_probe.py BYTES - what the emulated cluster's shapers send first.

Run by scripts/netns-cluster.sh on 2 hosts x 1 rank (tests/netns/calib_netns.sh
shaper).  Ranks 0 and 1 send each other BYTES at once on one TCP connection
while a second connection, marked DSCP EF (TOS 0xb8, as collstep's tcp
transport marks its control connections under CS_TCP_CONTROL_TOS), carries
1-byte ping-pongs from rank 0.  Rank 0 prints the exchange's time and the
median round trip of the ping-pongs from the first second on, when the data
queues have filled: with --prio control the marked packets go ahead of the
data (tens of microseconds), with --prio none they wait behind it.
"""
import os
import socket
import statistics
import sys
import threading
import time

rank = int(os.environ["RANK"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
size = int(sys.argv[1])


def connect(k, tos):
    if rank == 0:
        lsn = socket.socket()
        lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsn.bind((addr, port + k))
        lsn.listen(1)
        lsn.settimeout(30)
        s, _ = lsn.accept()
        lsn.close()
    else:
        deadline = time.time() + 30
        while True:
            try:
                s = socket.create_connection((addr, port + k), timeout=30)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.02)
    s.settimeout(60)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    return s


bulk, ping = connect(0, 0), connect(1, 0xB8)


failed = []  # a thread's exception ends only that thread: the main one reports it


def send():
    try:
        bulk.sendall(bytearray(size))
    except OSError as e:
        failed.append("sending the exchange: %s" % e)


def recv():
    got, buf = 0, memoryview(bytearray(1 << 20))
    try:
        while got < size:
            n = bulk.recv_into(buf)
            if n == 0:
                failed.append("the peer closed the exchange after %d of %d bytes" % (got, size))
                return
            got += n
    except OSError as e:
        failed.append("receiving the exchange: %s" % e)


tx, rx = threading.Thread(target=send), threading.Thread(target=recv)
t0 = time.time()
tx.start()
rx.start()
rtt = []
if rank == 0:
    while rx.is_alive():
        t = time.perf_counter()
        ping.sendall(b"x")
        if ping.recv(1) != b"x":
            raise SystemExit("prio_probe: the ping-pong broke")
        if time.time() - t0 > 1.0:
            rtt.append((time.perf_counter() - t) * 1e3)
        time.sleep(0.01)
    ping.sendall(b"q")
else:
    while True:
        c = ping.recv(1)
        if not c or c == b"q":
            break
        ping.sendall(c)
tx.join()
rx.join()
if failed:
    raise SystemExit("prio_probe: " + "; ".join(failed))
if rank == 0:
    if not rtt:
        raise SystemExit("prio_probe: the exchange ended within a second: no round trip measured")
    print("exchange %.3f s; ping-pong round trips %d, median %.3f ms"
          % (time.time() - t0, len(rtt), statistics.median(rtt)))
