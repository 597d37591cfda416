package upstreame2e

// deletionHold is what holds a deleted rollout in upstream's
// delete-blocked-when-* scenarios: the annotation that pauses or disables
// it, and the names of the scenario's steps that set and remove it.
type deletionHold struct {
	scenario, annotation, holdStep, releaseStep string
}

var (
	heldByPause   = deletionHold{"delete-blocked-when-paused", "pause", "pause-then-delete", "unpause-drains-finalizer"}
	heldByDisable = deletionHold{"delete-blocked-when-disabled", "disable", "disable-then-delete", "reenable-drains-finalizer"}
)

// deleteBlocked is the body of upstream's delete-blocked-when-paused and
// delete-blocked-when-disabled, and of their v0.20 twins under
// nodewright/: the scenario's kind names the manifest, the kubectl
// resource, the annotation and the event's object; the hold names the
// rest. Held, the deleted rollout is not let go (DeletionBlocked, a Warning
// event); released, the uninstall runs and it goes.
func deleteBlocked(s *scenario, hold deletionHold) {
	name := hold.scenario

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)

	s.step(hold.holdStep)
	if _, err := s.kubectl("annotate", s.resource(), name, s.key(hold.annotation+"=true"), "--overwrite"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("delete", s.resource(), name, "--wait=false"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)
	s.eventsExist("type=Warning,reason=DeletionBlocked,involvedObject.kind="+s.kind.Kind+",involvedObject.name="+name, assertTimeout)

	s.step(hold.releaseStep)
	if _, err := s.kubectl("annotate", s.resource(), name, s.key(hold.annotation+"-"), "--overwrite"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	s.waitGone(name, assertTimeout)
}
