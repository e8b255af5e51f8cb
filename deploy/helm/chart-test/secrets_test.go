package charttest

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Issue 25: with secretsEncryption the key ring's Secret (the keys keyIDs
// names, each a file named by its id) is mounted where [openkeel_secrets]
// reads it, in the API and the conductors; without it nothing of it is
// rendered, and a key ring without keys is refused.
func TestSecretsKeyRingMounted(t *testing.T) {
	r := mustRender(t, map[string]any{
		"secretsEncryption": map[string]any{"enabled": true, "secretName": "ironic-keys", "keyIDs": []any{"2026-06", "2026-12"}, "currentKeyID": "2026-12"},
	})
	cm, _ := find[*corev1.ConfigMap](t, r, "ConfigMap", configName)
	if want := "[openkeel_secrets]\ncurrent_key_id = 2026-12\nkey_files = /etc/ironic/keys\n"; !strings.Contains(cm.Data["ironic.conf"], want) {
		t.Errorf("ironic.conf lacks\n%s\nin\n%s", want, cm.Data["ironic.conf"])
	}
	api, _ := find[*appsv1.Deployment](t, r, "Deployment", apiName)
	conductors, _ := find[*appsv1.StatefulSet](t, r, "StatefulSet", conductorName)
	for name, spec := range map[string]corev1.PodSpec{"api": api.Spec.Template.Spec, "conductor": conductors.Spec.Template.Spec} {
		var vol *corev1.Volume
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == "secrets-keys" {
				vol = &spec.Volumes[i]
			}
		}
		if vol == nil || vol.Secret == nil || vol.Secret.SecretName != "ironic-keys" || len(vol.Secret.Items) != 2 ||
			vol.Secret.Items[1].Key != "2026-12" || vol.Secret.Items[1].Path != "2026-12" {
			t.Errorf("%s: key ring volume %+v, want keys 2026-06 and 2026-12 of Secret ironic-keys", name, vol)
		}
		mounted := false
		for _, c := range spec.Containers {
			for _, m := range c.VolumeMounts {
				mounted = mounted || (m.Name == "secrets-keys" && m.MountPath == "/etc/ironic/keys" && m.ReadOnly)
			}
		}
		if !mounted {
			t.Errorf("%s: the key ring is not mounted read-only at /etc/ironic/keys", name)
		}
	}

	if _, err := render(t, map[string]any{"secretsEncryption": map[string]any{"enabled": true}}); err == nil {
		t.Error("a key ring without keyIDs is accepted")
	}
	plain := mustRender(t, nil)
	cm, _ = find[*corev1.ConfigMap](t, plain, "ConfigMap", configName)
	if strings.Contains(cm.Data["ironic.conf"], "openkeel_secrets") {
		t.Error("ironic.conf names a key ring that is not enabled")
	}
}
