"""An oslo.messaging peer for the wire tests: Debian's python3-oslo.messaging
calling our server ("client") or serving our client ("server")."""
import json
import sys
import threading

from oslo_config import cfg
import oslo_messaging as messaging

from ironic.common import exception

mode, url, exchange, topic, host = sys.argv[1:6]
conf = cfg.CONF
conf([], project='oslo-peer')
transport = messaging.get_rpc_transport(
    conf, url=url, allowed_remote_exmods=['ironic.common.exception'])


def out(**kw):
    print(json.dumps(kw), flush=True)


if mode == 'client':
    # As ironic's rpcapi: topic <manager topic>.<host>, no server.
    target = messaging.Target(topic=topic + '.' + host, version='1.0',
                              exchange=exchange)
    client = messaging.RPCClient(transport, target, timeout=30)
    ctx = {'request_id': 'req-from-python', 'project_id': 'p-python',
           'roles': ['admin']}
    res = client.prepare(version='1.16').call(
        ctx, 'get_driver_properties', driver_name='fake-hardware')
    out(step='call', result=res)
    try:
        client.prepare(version='1.16').call(
            ctx, 'get_driver_properties', driver_name='missing')
    except Exception as e:
        out(step='error', cls=type(e).__name__,
            module=type(e).__module__, code=getattr(e, 'kwargs', {}).get('code'),
            message=str(e).split('\n')[0])
    try:
        client.prepare(version='2.0').call(
            ctx, 'get_driver_properties', driver_name='x')
    except Exception as e:
        out(step='version', cls=type(e).__name__,
            exc_type=getattr(e, 'exc_type', None))
    client.prepare(version='1.45').cast(ctx, 'continue_node_deploy',
                                        node_id='node-from-python')
    out(step='cast')
else:
    class Conductor(object):
        target = messaging.Target(version='1.62')

        def get_driver_properties(self, context, driver_name):
            if driver_name == 'missing':
                raise exception.DriverNotFound(driver_name=driver_name)
            return {'driver': driver_name, 'served_by': 'python',
                    'request_id': context.get('request_id')}

    server = messaging.get_rpc_server(
        transport, messaging.Target(topic=topic, server=host,
                                    exchange=exchange),
        [Conductor()], executor='threading')
    server.start()
    out(step='ready')
    # Until the test closes stdin.
    sys.stdin.read()
    server.stop()
    server.wait()
