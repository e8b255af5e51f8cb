"""How python-ironicclient and openstacksdk meet a locked node (409
NodeLocked): with their default retries they wait the lock out and
succeed, without retries they raise with the server's faultstring.
Arguments: base URL, node UUID, mode, and for the fail modes the
faultstring expected. Prints the calls made and the 409s seen."""
import sys

import requests

URL, NODE, MODE = sys.argv[1:4]
calls = 0
conflicts = 0
_send = requests.Session.send


def counting_send(self, *args, **kwargs):
    global calls, conflicts
    calls += 1
    resp = _send(self, *args, **kwargs)
    if resp.status_code == 409:
        conflicts += 1
    return resp


requests.Session.send = counting_send


def expect(cond, what):
    if not cond:
        sys.exit("%s: %s" % (MODE, what))


if MODE.startswith("ironicclient"):
    from ironicclient import client
    from ironicclient.common.apiclient import exceptions as exc
    if MODE == "ironicclient-retry":
        c = client.get_client(1, endpoint=URL, auth_type="none")
        c.node.set_power_state(NODE, "off")
        expect(conflicts >= 1, "no 409 was retried")
    else:
        c = client.get_client(1, endpoint=URL, auth_type="none",
                              max_retries=0)
        try:
            c.node.set_power_state(NODE, "off")
            expect(False, "power off of a locked node accepted")
        except exc.Conflict as e:
            expect(sys.argv[4] in str(e), "409: %s" % e)
        expect(conflicts == 1, "%d 409s without retries" % conflicts)
else:
    import openstack
    from openstack import exceptions
    if MODE == "sdk-retry":
        conn = openstack.connection.Connection(
            baremetal_endpoint_override=URL, auth_type="none")
        conn.baremetal.set_node_power_state(NODE, "power off")
        expect(conflicts >= 1, "no 409 was retried")
    else:
        conn = openstack.connection.Connection(
            baremetal_endpoint_override=URL, auth_type="none",
            baremetal_status_code_retries=0)
        try:
            conn.baremetal.set_node_power_state(NODE, "power off")
            expect(False, "power off of a locked node accepted")
        except exceptions.ConflictException as e:
            expect(sys.argv[4] in str(e), "409: %s" % e)
        expect(conflicts == 1, "%d 409s without retries" % conflicts)
print("%s made %d calls, %d answered 409" % (MODE, calls, conflicts))
