package timewindow

import (
	"strings"
	"testing"
	"time"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWeekdayWindow(t *testing.T) {
	w, err := Parse([]string{"Mon", "wed"}, "09:00", "17:00", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// 2026-11-23 is a Monday; Berlin is UTC+1 in November.
	cases := map[string]bool{
		"2026-11-23T08:30:00Z": true,  // 09:30 Berlin, Monday
		"2026-11-23T07:59:00Z": false, // 08:59 Berlin
		"2026-11-23T16:00:00Z": false, // 17:00 Berlin: the end is outside
		"2026-11-24T10:00:00Z": false, // Tuesday
	}
	for s, want := range cases {
		if got := w.Contains(at(t, s)); got != want {
			t.Errorf("%s: inside %v, want %v", s, got, want)
		}
	}
	if got := w.Next(at(t, "2026-11-23T17:00:00Z")); !got.Equal(at(t, "2026-11-25T08:00:00Z")) {
		t.Errorf("after Monday's window the next opens %s, want Wednesday 09:00 Berlin", got.UTC())
	}
	if now := at(t, "2026-11-23T09:00:00Z"); !w.Next(now).Equal(now) {
		t.Error("Next inside the window is not now")
	}
}

func TestWindowOverMidnight(t *testing.T) {
	w, err := Parse([]string{"Fri"}, "22:00", "04:00", "")
	if err != nil {
		t.Fatal(err)
	}
	// 2026-11-27 is a Friday.
	if !w.Contains(at(t, "2026-11-27T23:00:00Z")) || !w.Contains(at(t, "2026-11-28T03:59:00Z")) {
		t.Error("the Friday night window does not hold Friday 23:00 and Saturday 03:59")
	}
	if w.Contains(at(t, "2026-11-28T22:30:00Z")) {
		t.Error("Saturday night is inside a Friday-only window")
	}
	if got := w.Next(at(t, "2026-11-28T05:00:00Z")); !got.Equal(at(t, "2026-12-04T22:00:00Z")) {
		t.Errorf("next opening %s, want the next Friday 22:00", got)
	}
}

func TestParseNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		days             []string
		start, end, zone string
		want             string
	}{
		{[]string{"Funday"}, "01:00", "02:00", "", "days:"},
		{nil, "25:00", "02:00", "", "start:"},
		{nil, "01:00", "2pm", "", "end:"},
		{nil, "01:00", "02:00", "Mars/Olympus", "timeZone:"},
	} {
		if _, err := Parse(tc.days, tc.start, tc.end, tc.zone); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one starting with %q", tc, err, tc.want)
		}
	}
}
