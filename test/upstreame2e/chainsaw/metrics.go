package chainsaw

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Metric is one check of NodeWright's metrics_test.py: a sample of Name
// whose labels include Tags and whose value is Value, string for string, as
// the text exposition prints it ("1", "100"); with NotFound, the absence of
// such a sample.
type Metric struct {
	Name     string
	Value    string
	Tags     map[string]string
	NotFound bool
}

func (m Metric) String() string {
	keys := make([]string, 0, len(m.Tags))
	for k := range m.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var tags []string
	for _, k := range keys {
		tags = append(tags, k+"="+m.Tags[k])
	}
	s := fmt.Sprintf("%s %s {%s}", m.Name, m.Value, strings.Join(tags, ","))
	if m.NotFound {
		s += " --not-found"
	}
	return s
}

// ParseMetric reads a check as metrics_test.py's command line spells it:
// NAME VALUE [-t k=v]... [--not-found].
func ParseMetric(args ...string) (Metric, error) {
	m := Metric{Tags: map[string]string{}}
	var positional []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-t", "--tag":
			if i+1 >= len(args) {
				return m, fmt.Errorf("%s needs a value", a)
			}
			i++
			k, v, ok := strings.Cut(args[i], "=")
			if !ok {
				return m, fmt.Errorf("invalid tag format: %s; use key=value", args[i])
			}
			m.Tags[k] = v
		case "--not-found":
			m.NotFound = true
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) != 2 {
		return m, fmt.Errorf("want NAME VALUE, got %q", positional)
	}
	m.Name, m.Value = positional[0], positional[1]
	return m, nil
}

// metricLine is metrics_test.py's pattern: only samples with labels.
var metricLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}\s+(.+)$`)

// Matches reports whether one exposition line is a sample the check looks
// for, with metrics_test.py's label reading: pairs split at commas, key
// and value at the first '=', quotes trimmed.
func (m Metric) Matches(line string) bool {
	g := metricLine.FindStringSubmatch(line)
	if g == nil || g[1] != m.Name {
		return false
	}
	labels := map[string]string{}
	if g[2] != "" {
		for _, pair := range strings.Split(g[2], ",") {
			k, v, _ := strings.Cut(pair, "=")
			labels[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	for k, v := range m.Tags {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return g[3] == m.Value
}

// Found reports whether the exposition text holds a sample the check looks
// for.
func (m Metric) Found(r io.Reader) bool {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for s.Scan() {
		if m.Matches(s.Text()) {
			return true
		}
	}
	return false
}

// MetricsChecker scrapes a metrics endpoint as metrics_test.py does: every
// Period until the check holds or Timeout passes (its defaults: 30 s,
// 100 ms).
type MetricsChecker struct {
	URL             string
	Timeout, Period time.Duration
}

// Check polls until the check holds.
func (c MetricsChecker) Check(ctx context.Context, m Metric) error {
	timeout, period := c.Timeout, c.Period
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if period == 0 {
		period = 100 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		found, err := c.scrape(ctx, m)
		lastErr = err
		if err == nil && found != m.NotFound {
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(period):
		}
	}
	msg := fmt.Sprintf("metric %s: ", m)
	if m.NotFound {
		msg += "was found (should be absent)"
	} else {
		msg += "was not found"
	}
	msg += fmt.Sprintf(" after %s", timeout)
	if lastErr != nil {
		msg += fmt.Sprintf(" (last scrape: %v)", lastErr)
	}
	return fmt.Errorf("%s", msg)
}

// Samples returns the endpoint's samples of a metric, for a failure's
// report.
func (c MetricsChecker) Samples(ctx context.Context, name string) string {
	body, err := c.get(ctx)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func (c MetricsChecker) scrape(ctx context.Context, m Metric) (bool, error) {
	body, err := c.get(ctx)
	if err != nil {
		return false, err
	}
	return m.Found(strings.NewReader(body)), nil
}

func (c MetricsChecker) get(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", c.URL, resp.Status)
	}
	return string(data), nil
}
