package modelog

import (
	"reflect"
	"testing"
)

func TestSplitCutsTheLogAtEachModesMarker(t *testing.T) {
	log := Marker("apply") + "\n" +
		"2026-12-07T10:00:00Z [apply] step one\n" +
		Marker("apply-check") + "\n" +
		"2026-12-07T10:00:01Z [apply-check] looks good\n"
	want := []Part{
		{Mode: "apply", Text: "2026-12-07T10:00:00Z [apply] step one\n"},
		{Mode: "apply-check", Text: "2026-12-07T10:00:01Z [apply-check] looks good\n"},
	}
	if got := Split(log); !reflect.DeepEqual(got, want) {
		t.Errorf("Split = %#v, want %#v", got, want)
	}
	if text, ok := Of(log, "apply-check"); !ok || text != want[1].Text {
		t.Errorf("Of(apply-check) = %q, %v", text, ok)
	}
	if _, ok := Of(log, "config"); ok {
		t.Error("Of finds a mode the log has no marker for")
	}
}

func TestSplitKeepsALogWithoutMarkersWhole(t *testing.T) {
	log := "one\n=== not a marker\n=== skyhook-agent two words ===\n"
	got := Split(log)
	if len(got) != 1 || got[0].Mode != "" || got[0].Text != log {
		t.Errorf("Split = %#v, want the whole log as one part without a mode", got)
	}
	if got := Split(""); len(got) != 0 {
		t.Errorf("Split(\"\") = %#v, want nothing", got)
	}
}

func TestAModeThatWroteNothingStillHasItsPart(t *testing.T) {
	got := Split(Marker("config") + "\n" + Marker("config-check") + "\nok\n")
	want := []Part{{Mode: "config"}, {Mode: "config-check", Text: "ok\n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Split = %#v, want %#v", got, want)
	}
}
