package fleetbudget

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Ledger serializes the budgets' slots across the rollouts one operator
// runs (the leader): each rollout's pass asks before it starts a node, and
// the ledger answers with the budgets' decision (Check) over the nodes the
// cache shows out of service and the starts it granted that the cache does
// not show yet, so two rollouts' passes cannot both take the last slot.
// It serves waiting rollouts fairly: one held by a budget waits in line by
// priority (the lower number first, as Skyhooks order on a node), then by
// how long it has waited, and a rollout behind it in line does not take a
// slot of that budget before it. The zero value is ready to use.
type Ledger struct {
	mu      sync.Mutex
	granted map[string]grant
	waiting map[string]waiter
}

// Rollout is a rollout as the ledger orders it: its kind and name
// ("Skyhook/driver"), and its priority.
type Rollout struct {
	Name     string
	Priority int
}

type grant struct {
	rollout string
	at      time.Time
}

type waiter struct {
	Rollout
	since, seen time.Time
	budget      string
}

// GrantMemory is how long a granted start counts before the cache shows
// the node out of service; WaiterMemory how long a rollout keeps its place
// in line without asking again.
const (
	GrantMemory  = 30 * time.Second
	WaiterMemory = 2 * time.Minute
)

// Ask reports whether the rollout may start the node now, and when not,
// why; a granted start counts as out of service until the cache shows it
// (fleet) or GrantMemory passes.
func (l *Ledger) Ask(now time.Time, budgets []*Budget, fleet []Node, r Rollout, candidate Node, interrupting bool) (Hold, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(now, fleet)
	view := l.withGrants(fleet)
	if h, ok := Check(budgets, view, candidate, interrupting, now); !ok {
		l.wait(now, r, h.Budget)
		return h, false
	}
	if ahead, ok := l.ahead(r, budgets, candidate, now); ok {
		return Hold{Budget: ahead.budget, Ahead: ahead.Name}, false
	}
	delete(l.waiting, r.Name)
	if l.granted == nil {
		l.granted = map[string]grant{}
	}
	l.granted[candidate.Name] = grant{rollout: r.Name, at: now}
	return Hold{}, true
}

// forget drops the grants the cache shows now (or too old to wait for)
// and the waiters that stopped asking.
func (l *Ledger) forget(now time.Time, fleet []Node) {
	shown := map[string]bool{}
	for _, n := range fleet {
		if n.TakenBy != "" {
			shown[n.Name] = true
		}
	}
	for node, g := range l.granted {
		if shown[node] || now.Sub(g.at) > GrantMemory {
			delete(l.granted, node)
		}
	}
	for name, w := range l.waiting {
		if now.Sub(w.seen) > WaiterMemory {
			delete(l.waiting, name)
		}
	}
}

// withGrants is the fleet with the granted starts out of service.
func (l *Ledger) withGrants(fleet []Node) []Node {
	if len(l.granted) == 0 {
		return fleet
	}
	view := make([]Node, len(fleet))
	for i, n := range fleet {
		if g, ok := l.granted[n.Name]; ok && n.TakenBy == "" {
			n.TakenBy, n.Interrupting = g.rollout, true
		}
		view[i] = n
	}
	return view
}

// wait puts the rollout in line for the budget, keeping its place.
func (l *Ledger) wait(now time.Time, r Rollout, budget string) {
	if l.waiting == nil {
		l.waiting = map[string]waiter{}
	}
	w, ok := l.waiting[r.Name]
	if !ok {
		w = waiter{Rollout: r, since: now}
	}
	w.Priority, w.seen, w.budget = r.Priority, now, budget
	l.waiting[r.Name] = w
}

// ahead is a rollout waiting before r in line for a budget that selects the
// candidate and is active.
func (l *Ledger) ahead(r Rollout, budgets []*Budget, candidate Node, now time.Time) (waiter, bool) {
	mine, inLine := l.waiting[r.Name]
	var first waiter
	found := false
	for _, w := range l.waiting {
		if w.Name == r.Name || !budgetSelects(budgets, w.budget, candidate, now) {
			continue
		}
		if inLine && !before(w, mine) || !inLine && w.Priority > r.Priority {
			continue
		}
		if !found || before(w, first) {
			first, found = w, true
		}
	}
	return first, found
}

// before orders the line: lower priority number, then longer wait, then
// name.
func before(a, b waiter) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	if !a.since.Equal(b.since) {
		return a.since.Before(b.since)
	}
	return a.Name < b.Name
}

func budgetSelects(budgets []*Budget, name string, n Node, now time.Time) bool {
	for _, b := range budgets {
		if b.Name == name {
			return b.Selects(n.Labels) && b.Active(now)
		}
	}
	return false
}

// Waiting lists the rollouts in line, first first, with since when.
func (l *Ledger) Waiting() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ws []waiter
	for _, w := range l.waiting {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return before(ws[i], ws[j]) })
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = fmt.Sprintf("%s (priority %d, waiting on %s since %s)", w.Name, w.Priority, w.budget, w.since.UTC().Format(time.RFC3339))
	}
	return out
}
