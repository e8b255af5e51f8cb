package charttest

import (
	"testing"

	"github.com/openkeel/ironic/internal/config"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// Issue 24: with conductor.pushEvents the conductors listen for their
// BMCs' Redfish events on the port, at the same provisioning address as
// the file server, and tell the BMCs that address (over TLS with a TLS
// Secret); the port is on the pod, the headless Service and the
// NetworkPolicy (from networkPolicy.eventsFrom). Off, none of it renders.
func TestPushEventsListener(t *testing.T) {
	r := mustRender(t, map[string]any{
		"conductor": map[string]any{"pushEvents": map[string]any{"enabled": true, "port": 8444, "tlsSecretName": "ironic-events-tls"}},
		"networkPolicy": map[string]any{"enabled": true, "eventsFrom": []any{
			map[string]any{"ipBlock": map[string]any{"cidr": "10.10.0.0/24"}},
		}},
	})
	sts, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	pod := startPod(t, r, sts.Spec.Template.Spec, "conductor", podFacts{Name: sts.Name + "-1", HostIP: "192.168.0.11", PodIP: "10.244.0.7"})
	c := pod.Config
	if !c.BoolOf(config.OpenkeelEventsEnabled) || c.IntOf(config.OpenkeelEventsPort) != 8444 ||
		c.StringOf(config.OpenkeelEventsHostIP) != "192.168.0.11" ||
		c.StringOf(config.OpenkeelEventsExternalURL) != "https://192.168.0.11:8444" ||
		c.StringOf(config.OpenkeelEventsCertFile) != "/etc/ironic/tls/events/tls.crt" ||
		c.StringOf(config.OpenkeelEventsKeyFile) != "/etc/ironic/tls/events/tls.key" {
		t.Errorf("[openkeel_events] enabled=%v port=%d host_ip=%q external_url=%q cert=%q key=%q; want the listener on 192.168.0.11:8444 over TLS",
			c.BoolOf(config.OpenkeelEventsEnabled), c.IntOf(config.OpenkeelEventsPort), c.StringOf(config.OpenkeelEventsHostIP),
			c.StringOf(config.OpenkeelEventsExternalURL), c.StringOf(config.OpenkeelEventsCertFile), c.StringOf(config.OpenkeelEventsKeyFile))
	}
	var port *corev1.ContainerPort
	var mounted bool
	for _, ctr := range sts.Spec.Template.Spec.Containers {
		for i := range ctr.Ports {
			if ctr.Ports[i].Name == "events" {
				port = &ctr.Ports[i]
			}
		}
		for _, m := range ctr.VolumeMounts {
			mounted = mounted || (m.Name == "events-tls" && m.MountPath == "/etc/ironic/tls/events" && m.ReadOnly)
		}
	}
	if port == nil || port.ContainerPort != 8444 {
		t.Errorf("conductor container port events %+v, want 8444", port)
	}
	if !mounted {
		t.Error("the events TLS Secret is not mounted read-only at /etc/ironic/tls/events")
	}
	svc, _ := find[*corev1.Service](t, r, "Service", sts.Spec.ServiceName)
	found := false
	for _, p := range svc.Spec.Ports {
		found = found || (p.Name == "events" && p.Port == 8444 && p.TargetPort.StrVal == "events")
	}
	if !found {
		t.Errorf("conductor Service ports %+v lack events 8444", svc.Spec.Ports)
	}
	np, _ := find[*networkingv1.NetworkPolicy](t, r, "NetworkPolicy", conductorName)
	found = false
	for _, rule := range np.Spec.Ingress {
		if len(rule.Ports) == 1 && rule.Ports[0].Port.StrVal == "events" {
			found = len(rule.From) == 1 && rule.From[0].IPBlock != nil && rule.From[0].IPBlock.CIDR == "10.10.0.0/24"
		}
	}
	if !found {
		t.Errorf("conductor NetworkPolicy %+v does not open events to 10.10.0.0/24 only", np.Spec.Ingress)
	}

	off := mustRender(t, nil)
	sts, _ = find[*appsv1.StatefulSet](t, off, "StatefulSet", conductorName)
	pod = startPod(t, off, sts.Spec.Template.Spec, "conductor", podFacts{Name: sts.Name + "-0", HostIP: "192.168.0.10", PodIP: "10.244.0.9"})
	if pod.Config.BoolOf(config.OpenkeelEventsEnabled) || pod.Config.StringOf(config.OpenkeelEventsExternalURL) != "" {
		t.Error("push events configured although conductor.pushEvents is off")
	}
	for _, ctr := range sts.Spec.Template.Spec.Containers {
		for _, p := range ctr.Ports {
			if p.Name == "events" {
				t.Error("events port on the conductor although push events are off")
			}
		}
	}
}
