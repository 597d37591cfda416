// Package timewindow says whether a moment falls in a weekly window (some
// days, a start and an end time of day, a time zone) and when the window
// next opens. A window whose end is not after its start runs over midnight;
// its days are the days it opens on.
package timewindow

import (
	"fmt"
	"strings"
	"time"
)

// Window is a parsed weekly window.
type Window struct {
	days       map[time.Weekday]bool
	start, end time.Duration // since midnight
	loc        *time.Location
}

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// Parse reads a window: days as three-letter names (any case; none means
// every day), start and end as HH:MM, and an IANA time zone (empty is UTC).
// Each error names the field and the rule.
func Parse(days []string, start, end, zone string) (Window, error) {
	w := Window{days: map[time.Weekday]bool{}}
	for _, d := range days {
		day, ok := weekdays[strings.ToLower(d)]
		if !ok {
			return w, fmt.Errorf("days: %q is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)", d)
		}
		w.days[day] = true
	}
	if len(w.days) == 0 {
		for _, day := range weekdays {
			w.days[day] = true
		}
	}
	var err error
	if w.start, err = clock(start); err != nil {
		return w, fmt.Errorf("start: %w", err)
	}
	if w.end, err = clock(end); err != nil {
		return w, fmt.Errorf("end: %w", err)
	}
	if w.loc, err = time.LoadLocation(zone); err != nil {
		return w, fmt.Errorf("timeZone: %q is not an IANA time zone", zone)
	}
	return w, nil
}

func clock(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time of day as HH:MM", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// length is how long the window stays open once opened.
func (w Window) length() time.Duration {
	if w.end > w.start {
		return w.end - w.start
	}
	return 24*time.Hour - w.start + w.end
}

// opening is when the window opens on the day of t (in the window's zone).
func (w Window) opening(t time.Time) time.Time {
	y, m, d := t.In(w.loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, w.loc).Add(w.start)
}

// Contains reports whether t is inside the window: after an opening on one
// of its days (today's, or yesterday's for a window over midnight) and
// before that opening's end.
func (w Window) Contains(t time.Time) bool {
	for _, back := range []int{0, -1} {
		open := w.opening(t.In(w.loc).AddDate(0, 0, back))
		if w.days[open.Weekday()] && !t.Before(open) && t.Before(open.Add(w.length())) {
			return true
		}
	}
	return false
}

// Next is the first opening at or after t; t itself when inside.
func (w Window) Next(t time.Time) time.Time {
	if w.Contains(t) {
		return t
	}
	for day := 0; day <= 7; day++ {
		open := w.opening(t.In(w.loc).AddDate(0, 0, day))
		if w.days[open.Weekday()] && !open.Before(t) {
			return open
		}
	}
	return t // unreachable: some day of the next eight opens
}
