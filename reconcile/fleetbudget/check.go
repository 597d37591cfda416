package fleetbudget

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Node is a node as the budgets see it.
type Node struct {
	Name   string
	Labels map[string]string
	// TakenBy names the rollout that has the node out of service ("" when
	// none); Interrupting says whether it cordoned, drained or tainted it
	// (else a stage that disturbs nothing runs there).
	TakenBy      string
	Interrupting bool
}

// counts reports whether the budget counts the node as out of service.
func (b *Budget) counts(n Node) bool {
	return n.TakenBy != "" && (n.Interrupting || b.CountsEveryStage) && b.Selects(n.Labels)
}

// Hold says why a budget holds a node back: the budget, the domain whose
// cap is reached ("" for the budget's own cap, or the domains' count when
// Domains is set), the slots taken of those allowed, and by which rollouts.
type Hold struct {
	Budget string
	// Ahead is a rollout that waits for the budget before this one
	// (Ledger): the slot is its.
	Ahead          string
	Domain         string
	Domains        bool
	Taken, Allowed int
	By             map[string]int
}

// Message says the hold in a rollout's words.
func (h Hold) Message() string {
	if h.Ahead != "" {
		return fmt.Sprintf("waits behind %s for NodeDisruptionBudget %s", h.Ahead, h.Budget)
	}
	where := ""
	switch {
	case h.Domains:
		where = " (disrupted domains)"
	case h.Domain != "":
		where = fmt.Sprintf(" (domain %s)", h.Domain)
	}
	by := make([]string, 0, len(h.By))
	for r, n := range h.By {
		by = append(by, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(by)
	return fmt.Sprintf("held by NodeDisruptionBudget %s%s: %d of %d taken (%s)", h.Budget, where, h.Taken, h.Allowed, strings.Join(by, ", "))
}

// Check reports whether the node may go out of service now (interrupting:
// its next work cordons, drains or taints it) under every budget that
// selects it and is active at now; when not, the first budget that holds
// it, by name. The fleet is every node the budgets may select, the
// candidate among them or not.
func Check(budgets []*Budget, fleet []Node, candidate Node, interrupting bool, now time.Time) (Hold, bool) {
	sorted := append([]*Budget(nil), budgets...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, b := range sorted {
		if !b.Selects(candidate.Labels) || !b.Active(now) || !(interrupting || b.CountsEveryStage) {
			continue
		}
		if b.counts(candidate) {
			continue // out of service already: it holds its slot
		}
		if h, held := b.hold(fleet, candidate); held {
			return h, false
		}
	}
	return Hold{}, true
}

// hold checks the budget's caps for the candidate.
func (b *Budget) hold(fleet []Node, candidate Node) (Hold, bool) {
	selected, taken, by := 0, 0, map[string]int{}
	domainOf := func(n Node) string { return n.Labels[b.topologyKey] }
	domainSelected, domainTaken, domainBy := 0, 0, map[string]int{}
	disrupted := map[string]bool{}
	domainsBy := map[string]int{}
	want := domainOf(candidate)
	for _, n := range fleet {
		if !b.Selects(n.Labels) || n.Name == candidate.Name {
			continue
		}
		selected++
		inDomain := b.topologyKey != "" && want != "" && domainOf(n) == want
		if inDomain {
			domainSelected++
		}
		if !b.counts(n) {
			continue
		}
		taken++
		by[n.TakenBy]++
		if d := domainOf(n); b.topologyKey != "" && d != "" {
			disrupted[d] = true
			domainsBy[n.TakenBy]++
		}
		if inDomain {
			domainTaken++
			domainBy[n.TakenBy]++
		}
	}
	selected++ // the candidate
	if cap := allowed(b.max, selected); taken+1 > cap {
		return Hold{Budget: b.Name, Taken: taken, Allowed: cap, By: by}, true
	}
	if b.topologyKey == "" || want == "" {
		return Hold{}, false
	}
	domainSelected++
	if b.perDomain != nil {
		if cap := allowed(*b.perDomain, domainSelected); domainTaken+1 > cap {
			return Hold{Budget: b.Name, Domain: want, Taken: domainTaken, Allowed: cap, By: domainBy}, true
		}
	}
	if b.maxDomains > 0 && !disrupted[want] && len(disrupted)+1 > b.maxDomains {
		return Hold{Budget: b.Name, Domains: true, Taken: len(disrupted), Allowed: b.maxDomains, By: domainsBy}, true
	}
	return Hold{}, false
}
