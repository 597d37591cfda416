package fleetbudget

import (
	"time"
)

// Tally is what a budget counts at one moment, for its status and metrics.
type Tally struct {
	// Active: the budget applies now (no windows, or inside one).
	Active bool
	// Selected nodes, how many may be out of service at once (all of them
	// while the budget is not active), and how many are.
	Selected, Allowed, Disrupted int
	// ByRollout are the nodes out of service by the rollout that took
	// them.
	ByRollout map[string][]string
	// Domains are the domains of the budget's topology, with a node
	// selected, by name.
	Domains map[string]DomainTally
}

// DomainTally is one failure domain's count.
type DomainTally struct {
	Selected, Disrupted, Allowed int
}

// Count tallies the fleet for the budget at now.
func (b *Budget) Count(fleet []Node, now time.Time) Tally {
	t := Tally{Active: b.Active(now), ByRollout: map[string][]string{}, Domains: map[string]DomainTally{}}
	for _, n := range fleet {
		if !b.Selects(n.Labels) {
			continue
		}
		t.Selected++
		domain := ""
		if b.topologyKey != "" {
			domain = n.Labels[b.topologyKey]
		}
		d := t.Domains[domain]
		d.Selected++
		if b.counts(n) {
			t.Disrupted++
			d.Disrupted++
			t.ByRollout[n.TakenBy] = append(t.ByRollout[n.TakenBy], n.Name)
		}
		if domain != "" {
			t.Domains[domain] = d
		}
	}
	t.Allowed = t.Selected
	if t.Active {
		t.Allowed = allowed(b.max, t.Selected)
	}
	for name, d := range t.Domains {
		d.Allowed = d.Selected
		if t.Active && b.perDomain != nil {
			d.Allowed = allowed(*b.perDomain, d.Selected)
		}
		t.Domains[name] = d
	}
	return t
}

// NextChange is when the budget next starts or stops applying, after now;
// zero when it has no windows.
func (b *Budget) NextChange(now time.Time) time.Time {
	var next time.Time
	earliest := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, w := range b.windows {
		if start := w.schedule.Next(now.Add(-w.duration)); !start.After(now) {
			earliest(start.Add(w.duration)) // inside: it ends
		}
		earliest(w.schedule.Next(now))
	}
	return next
}
