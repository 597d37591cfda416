// Package gaugeset publishes the gauge series one owner (a rollout) has as
// a whole: a pass stages every value first, sets them, and only then
// deletes the owner's series it no longer has. A scrape between two passes
// therefore always finds a series that exists before and after; deleting
// every series and setting them again, as a GaugeVec alone allows, leaves
// a moment in which a scrape sees them gone (an absent() alert fires, a
// dashboard panel blinks).
//
// client_golang has no way to swap a vector's children at once; this keeps
// its GaugeVecs (their descriptors, registration and exposition) and only
// orders the writes.
package gaugeset

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Batch is the series an owner has after a pass, staged: nothing of it is
// visible before Published takes it.
type Batch struct {
	series map[seriesKey]*series
}

type seriesKey struct {
	vec    *prometheus.GaugeVec
	values string // label values joined by a byte no label value holds in practice
}

type series struct {
	vec    *prometheus.GaugeVec
	values []string
	value  float64
}

// Set stages the series of vec with the label values at v.
func (b *Batch) Set(vec *prometheus.GaugeVec, v float64, values ...string) {
	b.at(vec, values).value = v
}

// Add stages the series of vec with the label values at its staged value
// plus v (0 if not staged yet): tallies of several parts add up.
func (b *Batch) Add(vec *prometheus.GaugeVec, v float64, values ...string) {
	b.at(vec, values).value += v
}

func (b *Batch) at(vec *prometheus.GaugeVec, values []string) *series {
	key := seriesKey{vec, strings.Join(values, "\xff")}
	if s, ok := b.series[key]; ok {
		return s
	}
	if b.series == nil {
		b.series = map[seriesKey]*series{}
	}
	s := &series{vec: vec, values: append([]string(nil), values...)}
	b.series[key] = s
	return s
}

// Published are the series each owner has on the gauges.
type Published struct {
	mu     sync.Mutex
	owners map[string]map[seriesKey]*series
}

// Replace publishes b as all of the owner's series: b's are set, then the
// owner's earlier series that b does not have are deleted.
func (p *Published) Replace(owner string, b *Batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	before := p.owners[owner]
	p.set(owner, b, map[seriesKey]*series{})
	for key, s := range before {
		if _, kept := b.series[key]; !kept {
			s.vec.DeleteLabelValues(s.values...)
		}
	}
}

// Merge publishes b's series and keeps the owner's others.
func (p *Published) Merge(owner string, b *Batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.owners[owner]
	if kept == nil {
		kept = map[seriesKey]*series{}
	}
	p.set(owner, b, kept)
}

// Forget deletes every series of the owner.
func (p *Published) Forget(owner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.owners[owner] {
		s.vec.DeleteLabelValues(s.values...)
	}
	delete(p.owners, owner)
}

// set writes b's series and records them, with those in into, as the
// owner's.
func (p *Published) set(owner string, b *Batch, into map[seriesKey]*series) {
	for key, s := range b.series {
		s.vec.WithLabelValues(s.values...).Set(s.value)
		into[key] = s
	}
	if p.owners == nil {
		p.owners = map[string]map[seriesKey]*series{}
	}
	p.owners[owner] = into
}
