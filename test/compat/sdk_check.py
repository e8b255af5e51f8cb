"""openstacksdk's baremetal proxy against a running server: its own
microversion negotiation, per-call versions, provision waits and error
parsing; prints the number of HTTP calls it made. What the SDK changes is
read back with urllib, a second client. Argument: base URL."""
import json
import sys
import urllib.error
import urllib.request

import openstack
import requests
from openstack import exceptions

URL = sys.argv[1]
calls = 0
# (method, path, microversion) of every request, to check the versions
# the SDK picks per call from what it negotiated.
sent = []
_send = requests.Session.send


def counting_send(self, request, *args, **kwargs):
    global calls
    calls += 1
    path = request.path_url.split("?")[0].rstrip("/")
    sent.append((request.method, path,
                 request.headers.get("X-OpenStack-Ironic-API-Version")))
    return _send(self, request, *args, **kwargs)


requests.Session.send = counting_send
conn = openstack.connection.Connection(
    baremetal_endpoint_override=URL, auth_type="none")
bm = conn.baremetal


def expect(cond, what):
    if not cond:
        sys.exit("openstacksdk: " + what)


checks = 0


def raw(path):
    """GET path at 1.76 with urllib, which the SDK does not use."""
    global checks
    checks += 1
    req = urllib.request.Request(
        URL + path, headers={"X-OpenStack-Ironic-API-Version": "1.76"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


n = bm.create_node(driver="fake-hardware", name="sdk-0",
                   driver_info={"ipmi_address": "192.168.122.1"},
                   resource_class="sdk", provision_state="enroll")
expect(n.provision_state == "enroll", "created in %s" % n.provision_state)
found = [x.name for x in bm.nodes(resource_class="sdk")]
expect(found == ["sdk-0"], "nodes(resource_class=sdk): %s" % found)
expect(raw("/v1/nodes/sdk-0")["provision_state"] == "enroll",
       "raw: not in enroll")
n = bm.update_node(n, extra={"k": "v"})
expect(raw("/v1/nodes/" + n.id)["extra"] == {"k": "v"}, "extra not updated")

# manage/provide (1.4), deploy with a configdrive dict (1.56), undeploy.
n = bm.set_node_provision_state(n, "manage", wait=True, timeout=60)
expect(n.provision_state == "manageable", "manage: %s" % n.provision_state)
n = bm.set_node_provision_state(n, "provide", wait=True, timeout=60)
expect(n.provision_state == "available", "provide: %s" % n.provision_state)
bm.set_node_power_state(n, "power on", wait=True, timeout=60)
expect(raw("/v1/nodes/" + n.id)["power_state"] == "power on", "power on")
n = bm.set_node_provision_state(
    n, "active", config_drive={"meta_data": {"hostname": "h"}},
    wait=True, timeout=60)
expect(n.provision_state == "active", "deploy: %s" % n.provision_state)
seen = raw("/v1/nodes/" + n.id)
expect(seen["provision_state"] == "active" and seen["last_error"] is None,
       "raw after deploy: %s %s" % (seen["provision_state"],
                                    seen["last_error"]))
v = bm.validate_node(n, required=("power", "management"))
expect(v["power"].result and v["management"].result, "validate: %s" % v)
n = bm.set_node_provision_state(n, "deleted", wait=True, timeout=60)
expect(n.provision_state == "available", "undeploy: %s" % n.provision_state)

# Traits (1.37) and maintenance.
bm.set_node_traits(n, ["CUSTOM_A", "CUSTOM_B"])
traits = raw("/v1/nodes/%s/traits" % n.id)["traits"]
expect(sorted(traits) == ["CUSTOM_A", "CUSTOM_B"], "traits: %s" % traits)
expect(sorted(bm.get_node(n.id).traits) == ["CUSTOM_A", "CUSTOM_B"],
       "traits read by the SDK")
bm.set_node_maintenance(n, reason="sdk says so")
got = raw("/v1/nodes/" + n.id)
expect(got["maintenance"] and got["maintenance_reason"] == "sdk says so",
       "maintenance: %s %s" % (got["maintenance"], got["maintenance_reason"]))
bm.unset_node_maintenance(n)
expect(raw("/v1/nodes/" + n.id)["maintenance"] is False, "maintenance unset")

# Errors carry the faultstring.
try:
    bm.get_node("nosuch")
    expect(False, "missing node found")
except exceptions.NotFoundException as e:
    expect("Node nosuch could not be found." in str(e), "404: %s" % e)
try:
    bm.set_node_provision_state(n, "provide")
    expect(False, "provide from available accepted")
except exceptions.BadRequestException as e:
    want = ('The requested action "provide" can not be performed on node '
            '"%s" while it is in state "available".' % n.id)
    expect(want in str(e), "400: %s" % e)

bm.delete_node(n)
try:
    raw("/v1/nodes/" + n.id)
    expect(False, "deleted node still there")
except urllib.error.HTTPError as e:
    expect(e.code == 404, "deleted node: %d" % e.code)


def versions(method, suffix):
    return {v for m, p, v in sent if m == method and p.endswith(suffix)}


node = "/v1/nodes/" + n.id
# Discovery first, unversioned; then every call carries a version.
expect(sent[0][2] is None and all(v for _, p, v in sent[1:]
                                  if p.startswith("/v1/")),
       "unversioned calls: %s" % [c for c in sent if c[2] is None])
# Node calls at the node resource's maximum (1.76 in this SDK), which our
# range covers; traits at their own 1.37, not raised to the node's.
expect(versions("GET", node) == {"1.76"}, "GET node: %s" % versions("GET", node))
expect(versions("PATCH", node) == {"1.76"},
       "PATCH node: %s" % versions("PATCH", node))
expect(versions("PUT", node + "/states/provision") == {"1.76"},
       "provision: %s" % versions("PUT", node + "/states/provision"))
expect(versions("PUT", node + "/traits") == {"1.37"},
       "traits: %s" % versions("PUT", node + "/traits"))
print("openstacksdk made %d calls, urllib checks %d" % (calls, checks))
