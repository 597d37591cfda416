// Package promtest asks a Prometheus server what it scraped and what a
// dashboard's queries return, for the tests.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Client asks a Prometheus server over its HTTP API: client_golang's API
// client, and parse_query, which it does not cover.
type Client struct {
	promv1.API
	base string
}

// NewClient is a client of the Prometheus at base (http://host:port).
func NewClient(base string) (*Client, error) {
	c, err := api.NewClient(api.Config{Address: base})
	if err != nil {
		return nil, err
	}
	return &Client{API: promv1.NewAPI(c), base: strings.TrimSuffix(base, "/")}, nil
}

// Series evaluates query now and returns its result's series (a scalar
// or string result counts as one).
func (c *Client) Series(ctx context.Context, query string) (int, error) {
	v, _, err := c.Query(ctx, query, time.Now())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	switch r := v.(type) {
	case model.Vector:
		return len(r), nil
	case model.Matrix:
		return len(r), nil
	default:
		return 1, nil
	}
}

// Selector is a vector selector of a query.
type Selector struct {
	// Metric is the metric's name ("" when it matches by other labels only).
	Metric string
	// Query is the selector as a query of its own: {matchers}, without a
	// range.
	Query string
}

// Selectors are the vector selectors of a query (those under range
// functions included), as Prometheus's own parser reads it
// (/api/v1/parse_query), each once, in order.
func (c *Client) Selectors(ctx context.Context, query string) ([]Selector, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/v1/parse_query?query="+url.QueryEscape(query), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var parsed struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   any    `json:"data"`
	}
	if err := json.Unmarshal(body, &parsed); err != nil {
		return nil, fmt.Errorf("parse_query of %s: %w: %s", query, err, body)
	}
	if parsed.Status != "success" {
		return nil, fmt.Errorf("parse_query of %s: %s", query, parsed.Error)
	}
	seen := map[string]Selector{}
	collectSelectors(parsed.Data, seen)
	out := make([]Selector, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Query < out[j].Query })
	return out, nil
}

// collectSelectors walks parse_query's tree and adds each selector to
// seen, by its query.
func collectSelectors(node any, seen map[string]Selector) {
	switch n := node.(type) {
	case map[string]any:
		if t, _ := n["type"].(string); t == "vectorSelector" || t == "matrixSelector" {
			name, _ := n["name"].(string)
			q := selectorOf(n["matchers"])
			seen[q] = Selector{Metric: name, Query: q}
			return
		}
		for _, child := range n {
			collectSelectors(child, seen)
		}
	case []any:
		for _, child := range n {
			collectSelectors(child, seen)
		}
	}
}

func selectorOf(matchers any) string {
	list, _ := matchers.([]any)
	var parts []string
	for _, m := range list {
		mm, _ := m.(map[string]any)
		name, _ := mm["name"].(string)
		op, _ := mm["type"].(string)
		value, _ := mm["value"].(string)
		parts = append(parts, name+op+strconv.Quote(value))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}

// labelValues is Grafana's variable query label_values(selector, label).
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

// Expand makes a dashboard's query PromQL as Grafana would send it with
// every value of its variables chosen: $__rate_interval is 1m (four
// scrapes of a 15 s interval, Grafana's floor), another $variable any
// value; label_values(selector, label) asks for the selector.
func Expand(query string) string {
	if m := labelValues.FindStringSubmatch(query); m != nil {
		query = m[1]
	}
	query = strings.ReplaceAll(query, "$__rate_interval", "1m")
	return dashboardVariable.ReplaceAllString(query, ".*")
}

var dashboardVariable = regexp.MustCompile(`\$[a-zA-Z_][a-zA-Z0-9_]*`)
