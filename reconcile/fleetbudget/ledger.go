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

// Question is a rollout asking to start a node: the budgets, every node as
// they count it (the cache's view), the rollout, the node, and whether its
// work there interrupts (cordons, drains or taints it).
type Question struct {
	Budgets      []*Budget
	Fleet        []Node
	Rollout      Rollout
	Candidate    Node
	Interrupting bool
}

type grant struct {
	rollout string
	at      time.Time
	// shown: the cache has shown the node taken by the rollout since.
	shown bool
}

type waiter struct {
	Rollout
	since, seen time.Time
	budget      string
	// domain is the failure domain whose cap holds the rollout; "" when
	// the budget's own cap or its count of domains does.
	domain string
}

// GrantMemory is how long a granted start counts before the cache shows
// the node taken by its rollout; WaiterMemory how long a rollout keeps its
// place in line without asking again.
const (
	GrantMemory  = 30 * time.Second
	WaiterMemory = 2 * time.Minute
)

// Ask reports whether the rollout may start the node now, and when not,
// why. A start granted for interrupting work counts as out of service from
// the grant until the cache shows the node no longer taken by the rollout,
// or does not show it taken within GrantMemory: a package whose interrupt
// comes after stages that disturb nothing (a configMap change's
// configInterrupts) would otherwise leave its slot free until its cordon.
// The grants live in the leader's memory; a new leader counts cordons and
// the stages the budgets count, as the cache shows them.
func (l *Ledger) Ask(now time.Time, q Question) (Hold, bool) {
	budgets, fleet, r, candidate, interrupting := q.Budgets, q.Fleet, q.Rollout, q.Candidate, q.Interrupting
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(now, fleet)
	view := l.withGrants(fleet)
	if h, ok := Check(budgets, view, candidate, interrupting, now); !ok {
		l.wait(now, r, h)
		return h, false
	}
	if ahead, ok := l.ahead(r, budgets, candidate, now); ok {
		return Hold{Budget: ahead.budget, Ahead: ahead.Name}, false
	}
	delete(l.waiting, r.Name)
	if interrupting {
		if l.granted == nil {
			l.granted = map[string]grant{}
		}
		l.granted[candidate.Name] = grant{rollout: r.Name, at: now}
	}
	return Hold{}, true
}

// Release drops the rollout's grants of the nodes it is done with: a grant
// the cache never showed taken (the node's whole turn fell between two
// asks) would otherwise count until GrantMemory passes.
func (l *Ledger) Release(rollout string, nodes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, node := range nodes {
		if g, ok := l.granted[node]; ok && g.rollout == rollout {
			delete(l.granted, node)
		}
	}
}

// forget drops the grants whose node the cache no longer shows taken by
// their rollout (or never showed within GrantMemory), and the waiters that
// stopped asking.
func (l *Ledger) forget(now time.Time, fleet []Node) {
	takenBy := make(map[string]string, len(fleet))
	for _, n := range fleet {
		takenBy[n.Name] = n.TakenBy
	}
	for node, g := range l.granted {
		switch {
		case takenBy[node] == g.rollout:
			g.shown = true
			l.granted[node] = g
		case g.shown || now.Sub(g.at) > GrantMemory:
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
		if g, ok := l.granted[n.Name]; ok && (n.TakenBy == "" || n.TakenBy == g.rollout) {
			n.TakenBy, n.Interrupting = g.rollout, true
		}
		view[i] = n
	}
	return view
}

// wait puts the rollout in line for the budget that holds it, keeping its
// place.
func (l *Ledger) wait(now time.Time, r Rollout, h Hold) {
	if l.waiting == nil {
		l.waiting = map[string]waiter{}
	}
	w, ok := l.waiting[r.Name]
	if !ok {
		w = waiter{Rollout: r, since: now}
	}
	w.Priority, w.seen, w.budget, w.domain = r.Priority, now, h.Budget, h.Domain
	l.waiting[r.Name] = w
}

// ahead is a rollout waiting before r in line for a budget that selects the
// candidate and is active; one held by a domain's cap is ahead only for
// candidates in that domain, so a slot in another domain is not left idle.
func (l *Ledger) ahead(r Rollout, budgets []*Budget, candidate Node, now time.Time) (waiter, bool) {
	mine, inLine := l.waiting[r.Name]
	var first waiter
	found := false
	for _, w := range l.waiting {
		if w.Name == r.Name || !budgetSelects(budgets, w, candidate, now) {
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

// budgetSelects reports whether the budget the waiter waits for holds the
// candidate too: it selects it and is active, and the candidate is in the
// waiter's domain when a domain's cap holds the waiter.
func budgetSelects(budgets []*Budget, w waiter, n Node, now time.Time) bool {
	for _, b := range budgets {
		if b.Name == w.budget {
			return b.Selects(n.Labels) && b.Active(now) && (w.domain == "" || n.Labels[b.topologyKey] == w.domain)
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
