package run

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzInterruptSpec gives the agent's interrupt argument arbitrary text and
// checks: no panic; a refusal says it is the interrupt, and what in it; an
// accepted one has a known type, services for the service type, each one
// systemctl argument that is no path and no option list, and encodes and
// reads back the same.
func FuzzInterruptSpec(f *testing.F) {
	for _, seed := range []string{
		`{"type":"reboot"}`, `{"type":"noop"}`, `{"type":"restartAllServices"}`,
		`{"type":"service","services":["containerd","kubelet.service"]}`,
		`{"type":"service"}`, `{"type":"service","services":[]}`, `{"type":"service","services":["a b"]}`,
		`{"type":"service","services":["../../bin/sh"]}`, `{"type":"service","services":[""]}`,
		`{"type":"explode"}`, `{"type":5}`, `[]`, `null`, `{`, ``, `{"type":"reboot","services":["x"],"extra":1}`,
		`{"type":"service","services":["\u0000"]}`, `{"TYPE":"reboot"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		spec, err := parseInterrupt(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "the interrupt ") {
				t.Fatalf("a refusal that does not say it is the interrupt: %v", err)
			}
			return
		}
		if !slices.Contains([]string{"reboot", "service", "restartAllServices", "noop"}, spec.Type) {
			t.Fatalf("accepted type %q", spec.Type)
		}
		if spec.Type == "service" && len(spec.Services) == 0 {
			t.Fatal("accepted a service interrupt without services")
		}
		for _, s := range spec.Services {
			if s == "" || strings.ContainsAny(s, "/ \t\n\x00") {
				t.Fatalf("accepted service %q", s)
			}
		}
		encoded, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseInterrupt(string(encoded))
		if err != nil || !reflect.DeepEqual(again, spec) {
			t.Fatalf("%s reads back as %+v, %v; want %+v", encoded, again, err, spec)
		}
	})
}
