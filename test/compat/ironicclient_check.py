"""python-ironicclient's microversion handling and error parsing against a
running server; prints the number of HTTP calls it made. Argument: base
URL. Exits non-zero with a message on the first unmet expectation. What the
client changes is read back with urllib, a second client."""
import json
import sys
import urllib.error
import urllib.request

import requests
from ironicclient import client
from ironicclient.common.apiclient import exceptions as exc

URL = sys.argv[1]
calls = 0
_send = requests.Session.send


def counting_send(self, *args, **kwargs):
    global calls
    calls += 1
    return _send(self, *args, **kwargs)


requests.Session.send = counting_send


def expect(cond, what):
    if not cond:
        sys.exit("ironicclient: " + what)


checks = 0


def raw(path):
    """GET path at 1.31 with urllib, which ironicclient does not use."""
    global checks
    checks += 1
    req = urllib.request.Request(
        URL + path, headers={"X-OpenStack-Ironic-API-Version": "1.31"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


c = client.get_client(1, endpoint=URL, auth_type="none")
n = c.node.create(driver="fake-hardware", name="icl-0",
                  driver_info={"ipmi_address": "192.168.122.1",
                               "ipmi_password": "pw"})
expect(c.http_client.os_ironic_api_version == "1.9",
       "default version %s, want 1.9" % c.http_client.os_ironic_api_version)
d = c.node.get("icl-0").to_dict()
# name came in 1.5, resource_class in 1.21: at the default 1.9 only the first.
expect(d.get("name") == "icl-0" and "resource_class" not in d,
       "node at 1.9: %s" % sorted(d))
expect(d["driver_info"]["ipmi_password"] == "******", "password shown")
# Before 1.11 a new node starts in available, not enroll.
expect(d["provision_state"] == "available",
       "created at 1.9 in %s" % d["provision_state"])
seen = raw("/v1/nodes/icl-0")
expect(seen["uuid"] == n.uuid and seen["provision_state"] == "available"
       and seen["resource_class"] is None, "raw: %s" % seen)

# A patch at 1.9, read back by the second client.
c.node.update("icl-0", [{"op": "add", "path": "/extra/rack", "value": "r2"}])
expect(raw("/v1/nodes/" + n.uuid)["extra"] == {"rack": "r2"},
       "extra after update")

# A list of versions: negotiated against GET /v1's headers.
c2 = client.get_client(1, endpoint=URL, auth_type="none",
                       os_ironic_api_version=["1.200", "1.31"])
d = c2.node.get("icl-0").to_dict()
expect(c2.http_client.os_ironic_api_version == "1.31",
       "negotiated %s, want 1.31" % c2.http_client.os_ironic_api_version)
expect("resource_class" in d, "node at 1.31 lacks resource_class")

# latest: negotiated down to the client's own maximum after our answer.
c3 = client.get_client(1, endpoint=URL, auth_type="none",
                       os_ironic_api_version="latest")
c3.node.get("icl-0")
expect(c3.http_client.api_version_select_state == "negotiated",
       "latest not negotiated")

# A version above ours, pinned by the user: our 406 and its headers make
# the client refuse with the server's range.
c4 = client.get_client(1, endpoint=URL, auth_type="none",
                       os_ironic_api_version="1.999")
try:
    c4.node.get("icl-0")
    expect(False, "1.999 accepted")
except exc.UnsupportedVersion as e:
    expect("1.999" in str(e), "406 message: %s" % e)

# Errors: the faultstring reaches the exception text.
try:
    c.node.get("nosuch")
    expect(False, "missing node found")
except exc.NotFound as e:
    expect("Node nosuch could not be found." in str(e), "404: %s" % e)
try:
    c.node.set_provision_state("icl-0", "provide")
    expect(False, "provide from available accepted")
except exc.BadRequest as e:
    want = ('The requested action "provide" can not be performed on node '
            '"%s" while it is in state "available".' % n.uuid)
    expect(want in str(e), "400: %s" % e)

c.node.delete("icl-0")
try:
    raw("/v1/nodes/" + n.uuid)
    expect(False, "deleted node still there")
except urllib.error.HTTPError as e:
    expect(e.code == 404, "deleted node: %d" % e.code)
print("ironicclient made %d calls, urllib checks %d" % (calls, checks))
