"""How python-ironicclient and openstacksdk meet the answers they retry: 409
(NodeLocked) and 503 (NoFreeConductorWorker). Both clients run at the same
time, each powering on its own node. Mode "fail": retries off, each client
raises at once with the server's faultstring. Mode "retry": default
retries, each client waits the refusals out and succeeds.
Arguments: base URL, mode, status, then ironicclient's node UUID and the
faultstring it gets, then the SDK's. Prints the calls made and the
refusals seen per client."""
import logging
import re
import sys
import threading

import requests

URL, MODE, STATUS, NODE_A, FAULT_A, NODE_B, FAULT_B = sys.argv[1:8]
STATUS = int(STATUS)
counts = {}
lock = threading.Lock()
_send = requests.Session.send


def counting_send(self, *args, **kwargs):
    resp = _send(self, *args, **kwargs)
    name = threading.current_thread().name
    with lock:
        c = counts.setdefault(name, [0, 0])
        c[0] += 1
        if resp.status_code == STATUS:
            c[1] += 1
            if c[1] == 1:
                # The caller may wait for this line to end the refusals.
                print("%s refused" % name, flush=True)
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


def ironicclient_power(node, fault, retries):
    from ironicclient import client
    from ironicclient.common.apiclient import exceptions as exc
    kwargs = {} if retries else {"max_retries": 0}
    c = client.get_client(1, endpoint=URL, auth_type="none", **kwargs)
    try:
        c.node.set_power_state(node, "on")
        expect(retries, "power on accepted")
    except (exc.Conflict, exc.ServiceUnavailable) as e:
        expect(not retries, "gave up: %s" % e)
        # Upstream's client shows the faultstring, then the status.
        expect(e.http_status == STATUS and
               str(e).startswith("%s (HTTP %d)" % (fault, STATUS)),
               "%d: %s" % (e.http_status, e))
    # Each refused attempt is logged with the faultstring and the count.
    total = 6 if retries else 1
    pattern = re.compile(r"^Error contacting Ironic server: %s \(HTTP %d\) "
                         r"\(Request-ID: req-[0-9a-f-]{36}\)\. "
                         r"Attempt 1 of %d$" % (re.escape(fault), STATUS,
                                                total))
    expect(any(pattern.match(m) for m in retry_log.messages),
           "retry log: %s" % retry_log.messages)


def sdk_power(node, fault, retries):
    import openstack
    from openstack import exceptions
    kwargs = {} if retries else {"baremetal_status_code_retries": 0}
    conn = openstack.connection.Connection(
        baremetal_endpoint_override=URL, auth_type="none", **kwargs)
    try:
        conn.baremetal.set_node_power_state(node, "power on")
        expect(retries, "power on accepted")
    except exceptions.HttpException as e:
        expect(not retries, "gave up: %s" % e)
        expect(e.status_code == STATUS, "status %s" % e.status_code)
        expect(fault in str(e), "%d: %s" % (STATUS, e))


def run(name, fn, node, fault):
    def guarded():
        try:
            fn(node, fault, MODE == "retry")
        except Exception as e:  # a thread's exception would be lost
            expect(False, "%s: %r" % (type(e).__name__, e))
    th = threading.Thread(target=guarded, name=name)
    th.start()
    return th


# Both imports before the first call: the refusals last a while only.
import ironicclient.client  # noqa: E402,F401
import openstack  # noqa: E402,F401

threads = [run("ironicclient", ironicclient_power, NODE_A, FAULT_A),
           run("openstacksdk", sdk_power, NODE_B, FAULT_B)]
for th in threads:
    th.join()
for name in ("ironicclient", "openstacksdk"):
    calls, refused = counts.get(name, [0, 0])
    if MODE == "retry":
        expect(refused >= 1, "%s: no %d was retried" % (name, STATUS))
    else:
        expect(refused == 1, "%s: %d refusals without retries" %
               (name, refused))
    print("%s %s made %d calls, %d answered %d" %
          (name, MODE, calls, refused, STATUS))
if failures:
    sys.exit("\n".join(failures))
