"""How python-ironicclient and openstacksdk meet a conductor with no free
worker (503 NoFreeConductorWorker). Mode "fail": retries off, each client
raises at once with the server's faultstring. Mode "retry": default
retries, both clients at the same time, each waiting the busy workers out.
Arguments: base URL, mode, the faultstring, and two node UUIDs (one per
client). Prints the calls made and the 503s seen per client."""
import logging
import re
import sys
import threading

import requests

URL, MODE, FAULT, NODE_A, NODE_B = sys.argv[1:6]
counts = {}
lock = threading.Lock()
_send = requests.Session.send


def counting_send(self, *args, **kwargs):
    resp = _send(self, *args, **kwargs)
    with lock:
        c = counts.setdefault(threading.current_thread().name, [0, 0])
        c[0] += 1
        if resp.status_code == 503:
            c[1] += 1
    return resp


requests.Session.send = counting_send


class Collect(logging.Handler):
    """Keeps ironicclient's retry messages, which it logs, not raises."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


retry_log = Collect()
log = logging.getLogger("ironicclient.common.http")
log.setLevel(logging.DEBUG)
log.addHandler(retry_log)
log.propagate = False
failures = []


def expect(cond, what):
    if not cond:
        failures.append("%s %s: %s" % (MODE, threading.current_thread().name,
                                       what))


def ironicclient_power(node, retries):
    from ironicclient import client
    from ironicclient.common.apiclient import exceptions as exc
    kwargs = {} if retries else {"max_retries": 0}
    c = client.get_client(1, endpoint=URL, auth_type="none", **kwargs)
    try:
        c.node.set_power_state(node, "on")
        expect(retries, "power on accepted with no free worker")
    except exc.ServiceUnavailable as e:
        expect(not retries, "gave up: %s" % e)
        # Upstream's client shows the faultstring, then the status.
        expect(str(e).startswith(FAULT + " (HTTP 503)"), "503: %s" % e)
    # Each refused attempt is logged with the faultstring and the count.
    total = 6 if retries else 1
    pattern = re.compile(r"^Error contacting Ironic server: %s \(HTTP 503\) "
                         r"\(Request-ID: req-[0-9a-f-]{36}\)\. "
                         r"Attempt 1 of %d$" % (re.escape(FAULT), total))
    expect(any(pattern.match(m) for m in retry_log.messages),
           "retry log: %s" % retry_log.messages)


def sdk_power(node, retries):
    import openstack
    from openstack import exceptions
    kwargs = {} if retries else {"baremetal_status_code_retries": 0}
    conn = openstack.connection.Connection(
        baremetal_endpoint_override=URL, auth_type="none", **kwargs)
    try:
        conn.baremetal.set_node_power_state(node, "power on")
        expect(retries, "power on accepted with no free worker")
    except exceptions.HttpException as e:
        expect(not retries, "gave up: %s" % e)
        expect(e.status_code == 503, "status %s" % e.status_code)
        expect(FAULT in str(e), "503: %s" % e)


def run(name, fn, node):
    def guarded():
        try:
            fn(node, MODE == "retry")
        except Exception as e:  # a thread's exception would be lost
            expect(False, "%s: %r" % (type(e).__name__, e))
    th = threading.Thread(target=guarded, name=name)
    th.start()
    return th


# Both imports before the first call: the pool is full for a while only.
import ironicclient.client  # noqa: E402,F401
import openstack  # noqa: E402,F401

threads = [run("ironicclient", ironicclient_power, NODE_A),
           run("openstacksdk", sdk_power, NODE_B)]
for th in threads:
    th.join()
for name in ("ironicclient", "openstacksdk"):
    calls, unavailable = counts.get(name, [0, 0])
    if MODE == "retry":
        expect(unavailable >= 1, "%s: no 503 was retried" % name)
    else:
        expect(unavailable == 1, "%s: %d 503s without retries" %
               (name, unavailable))
    print("%s %s made %d calls, %d answered 503" %
          (name, MODE, calls, unavailable))
if failures:
    sys.exit("\n".join(failures))
