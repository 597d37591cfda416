package main

import (
	"strings"
	"testing"
)

func TestDefaultResourcesAllOrNone(t *testing.T) {
	if r, err := defaultResources("", "", "", ""); r != nil || err != nil {
		t.Fatalf("none set: %v, %v; want nothing", r, err)
	}
	r, err := defaultResources("100m", "1", "64Mi", "256Mi")
	if err != nil || r.CPULimit.String() != "1" || r.MemoryRequest.String() != "64Mi" {
		t.Fatalf("all set: %+v, %v", r, err)
	}
	if _, err := defaultResources("100m", "", "", ""); err == nil || !strings.Contains(err.Error(), "set all four") {
		t.Fatalf("one set: %v; want the all-or-none rule", err)
	}
	if _, err := defaultResources("lots", "1", "1Mi", "1Mi"); err == nil || !strings.Contains(err.Error(), "--default-cpu-request") {
		t.Fatalf("bad quantity: %v; want the flag named", err)
	}
}
