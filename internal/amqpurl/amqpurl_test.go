package amqpurl

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"defaults", "rabbit://", []string{"amqp://guest:guest@localhost:5672/"}},
		{"one host", "rabbit://u:p@h1:5673/", []string{"amqp://u:p@h1:5673/"}},
		{"vhost", "rabbit://u:p@h1/ironic", []string{"amqp://u:p@h1:5672/ironic"}},
		{"several hosts in order", "rabbit://u:p@h1:5672,v:q@h2:5673/vh",
			[]string{"amqp://u:p@h1:5672/vh", "amqp://v:q@h2:5673/vh"}},
		{"ssl", "rabbit://u:p@h1:5671/?ssl=1", []string{"amqps://u:p@h1:5671/"}},
		{"escaped password", "rabbit://u:p%40ss@h1/", []string{"amqp://u:p%40ss@h1:5672/"}},
		{"ipv6", "rabbit://u:p@[::1]:5672/", []string{"amqp://u:p@[::1]:5672/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("Parse(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := Parse("kafka://h1/"); err == nil {
		t.Error("a kafka:// URL parsed")
	}
}

func TestMaskHidesPassword(t *testing.T) {
	if got := Mask("amqp://u:secret@h1:5672/"); got != "amqp://***@h1:5672/" {
		t.Errorf("Mask = %q", got)
	}
}
