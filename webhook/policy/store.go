package policy

import (
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/kyverno/kyverno-json/pkg/apis/policy/v1alpha1"

	"github.com/skyhook-go/skyhook/policies"
)

// Store holds the policies in force: the shipped defaults, overlaid by the
// admins' policies (a policy with a default's name replaces it). Reads are
// lock-free, so admission never waits for a reload.
type Store struct {
	defaults []*v1alpha1.ValidatingPolicy
	current  atomic.Pointer[Set]
}

// NewStore starts with the given default policies in force.
func NewStore(defaults []*v1alpha1.ValidatingPolicy) *Store {
	s := &Store{defaults: defaults}
	s.current.Store(NewSet(defaults...))
	return s
}

// Current is the set in force.
func (s *Store) Current() *Set { return s.current.Load() }

// SetExtra puts the defaults overlaid by extra in force.
func (s *Store) SetExtra(extra []*v1alpha1.ValidatingPolicy) {
	s.current.Store(NewSet(append(append([]*v1alpha1.ValidatingPolicy{}, s.defaults...), extra...)...))
}

// Defaults parses the shipped policies (see package policies).
func Defaults() ([]*v1alpha1.ValidatingPolicy, error) {
	files, err := policies.Default()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*v1alpha1.ValidatingPolicy
	for _, n := range names {
		ps, err := Parse(files[n])
		if err != nil {
			return nil, fmt.Errorf("shipped policy %s: %w", n, err)
		}
		out = append(out, ps...)
	}
	return out, nil
}
