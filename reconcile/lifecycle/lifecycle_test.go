package lifecycle

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func entry(version string, stage skyhookv1.Stage, state skyhookv1.State) skyhookv1.PackageStatus {
	return skyhookv1.PackageStatus{Name: "tuning", Version: version, Image: "img:" + version, Stage: stage, State: state}
}

func pkg(version string, interrupt bool) *skyhookv1.Package {
	p := &skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: version}, Image: "img"}
	if interrupt {
		p.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}
	}
	return p
}

// The stages and states the cases name.
const (
	apply, config, upgrade, uninstall   = skyhookv1.StageApply, skyhookv1.StageConfig, skyhookv1.StageUpgrade, skyhookv1.StageUninstall
	interrupt, post, uninstallInterrupt = skyhookv1.StageInterrupt, skyhookv1.StagePostInterrupt, skyhookv1.StageUninstallInterrupt
	complete, running, erroring         = skyhookv1.StateComplete, skyhookv1.StateInProgress, skyhookv1.StateErroring
)

// nextCase is a package as declared, its records on a node, and the step
// Next must decide.
type nextCase struct {
	name     string
	declared *skyhookv1.Package
	recorded []skyhookv1.PackageStatus
	want     Step
}

func TestNext(t *testing.T) {
	cases := []nextCase{
		{"first install starts with apply", pkg("1.0.0", false), nil, Step{Run, apply, "1.0.0", "img"}},
		{"apply running", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("1.0.0", apply, running)}, Step{Run, apply, "1.0.0", "img"}},
		{"apply erroring is retried", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("1.0.0", apply, erroring)}, Step{Run, apply, "1.0.0", "img"}},
		{"config after apply", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("1.0.0", apply, complete)}, Step{Run, config, "1.0.0", "img"}},
		{"done after config", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, Step{Done, config, "1.0.0", "img"}},
		{"interrupt after config when asked", pkg("1.0.0", true), []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, Step{Run, interrupt, "1.0.0", "img"}},
		{"post-interrupt after interrupt", pkg("1.0.0", true), []skyhookv1.PackageStatus{entry("1.0.0", interrupt, complete)}, Step{Run, post, "1.0.0", "img"}},
		{"done after post-interrupt", pkg("1.0.0", true), []skyhookv1.PackageStatus{entry("1.0.0", post, complete)}, Step{Done, post, "1.0.0", "img"}},
		{"version up upgrades", pkg("2.0.0", false), []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, Step{Run, upgrade, "2.0.0", "img"}},
		{"config after upgrade", pkg("2.0.0", false), []skyhookv1.PackageStatus{entry("2.0.0", upgrade, complete)}, Step{Run, config, "2.0.0", "img"}},
		{"version down applies the new one beside the old record", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("2.0.0", config, complete)}, Step{Run, apply, "1.0.0", "img"}},
		{"and the old record stays once it is done", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("1.0.0", config, complete), entry("2.0.0", config, complete)}, Step{Done, config, "1.0.0", "img"}},
		{"a finished uninstall of another version is forgotten", pkg("1.0.0", false), []skyhookv1.PackageStatus{entry("2.0.0", uninstall, complete)}, Step{Forget, "", "2.0.0", "img:2.0.0"}},
		{"removed package keeps its record and runs nothing", nil, []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, Step{Action: Done}},
		{"removed and uninstalled is forgotten", nil, []skyhookv1.PackageStatus{entry("1.0.0", uninstall, complete)}, Step{Forget, "", "1.0.0", "img:1.0.0"}},
		{"removed and never installed", nil, nil, Step{Action: Done}},
		{"semver, not string order: 1.10 is above 1.9", pkg("1.10.0", false), []skyhookv1.PackageStatus{entry("1.9.0", config, complete)}, Step{Run, upgrade, "1.10.0", "img"}},
	}
	changed := []struct {
		name     string
		recorded []skyhookv1.PackageStatus
		want     Step
	}{
		{"a changed configMap reruns config on a done package", []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, Step{Run, config, "1.0.0", "img"}},
		{"but does not jump the lifecycle", []skyhookv1.PackageStatus{entry("1.0.0", apply, complete)}, Step{Run, config, "1.0.0", "img"}},
		{"nor a running stage", []skyhookv1.PackageStatus{entry("1.0.0", apply, running)}, Step{Run, apply, "1.0.0", "img"}},
	}
	// A configMap rerun whose changed keys ask for no interrupt ends after
	// config, even for a package with an interrupt of its own.
	if got := Next(pkg("1.0.0", true), []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, false, false); got.Action != Done {
		t.Errorf("a config rerun without a configInterrupt: %+v, want done", got)
	}
	for _, tc := range changed {
		t.Run(tc.name, func(t *testing.T) {
			if got := Next(pkg("1.0.0", false), tc.recorded, true, false); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Next(tc.declared, tc.recorded, false, tc.declared != nil && tc.declared.Interrupt != nil); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func uninstalling(version string, interrupt, apply bool) *skyhookv1.Package {
	p := pkg(version, interrupt)
	p.Uninstall = &skyhookv1.Uninstall{Enabled: true, Apply: apply}
	return p
}

func TestNextExplicitUninstall(t *testing.T) {
	cases := []nextCase{
		{"apply: true on an installed package uninstalls it", uninstalling("1.0.0", false, true), []skyhookv1.PackageStatus{entry("1.0.0", config, complete)}, Step{Run, uninstall, "1.0.0", "img"}},
		{"also after a failed install", uninstalling("1.0.0", false, true), []skyhookv1.PackageStatus{entry("1.0.0", apply, erroring)}, Step{Run, uninstall, "1.0.0", "img"}},
		{"a running stage finishes first", uninstalling("1.0.0", false, true), []skyhookv1.PackageStatus{entry("1.0.0", apply, running)}, Step{Run, apply, "1.0.0", "img"}},
		{"a running interrupt finishes first", uninstalling("1.0.0", true, true), []skyhookv1.PackageStatus{entry("1.0.0", interrupt, running)}, Step{Run, interrupt, "1.0.0", "img"}},
		{"uninstall running", uninstalling("1.0.0", false, true), []skyhookv1.PackageStatus{entry("1.0.0", uninstall, running)}, Step{Run, uninstall, "1.0.0", "img"}},
		{"uninstall erroring is retried", uninstalling("1.0.0", false, true), []skyhookv1.PackageStatus{entry("1.0.0", uninstall, erroring)}, Step{Run, uninstall, "1.0.0", "img"}},
		{"uninstall done without interrupt: forgotten", uninstalling("1.0.0", false, true), []skyhookv1.PackageStatus{entry("1.0.0", uninstall, complete)}, Step{Forget, "", "1.0.0", "img:1.0.0"}},
		{"uninstall done with an interrupt: the uninstall interrupt", uninstalling("1.0.0", true, true), []skyhookv1.PackageStatus{entry("1.0.0", uninstall, complete)}, Step{Run, uninstallInterrupt, "1.0.0", "img"}},
		{"uninstall interrupt done: forgotten", uninstalling("1.0.0", true, true), []skyhookv1.PackageStatus{entry("1.0.0", uninstallInterrupt, complete)}, Step{Forget, "", "1.0.0", "img:1.0.0"}},
		{"absent is uninstalled", uninstalling("1.0.0", false, true), nil, Step{Done, uninstall, "1.0.0", "img"}},
		{"cancelled during the uninstall: installs again", uninstalling("1.0.0", false, false), []skyhookv1.PackageStatus{entry("1.0.0", uninstall, running)}, Step{Run, apply, "1.0.0", "img"}},
		{"cancelled during the uninstall interrupt: it runs to the end", uninstalling("1.0.0", true, false), []skyhookv1.PackageStatus{entry("1.0.0", uninstallInterrupt, running)}, Step{Run, uninstallInterrupt, "1.0.0", "img"}},
		{"cancelled after the uninstall interrupt: forgotten, then installed", uninstalling("1.0.0", true, false), []skyhookv1.PackageStatus{entry("1.0.0", uninstallInterrupt, complete)}, Step{Forget, "", "1.0.0", "img:1.0.0"}},
		{"cancelled after it finished: installs again", uninstalling("1.0.0", false, false), nil, Step{Run, apply, "1.0.0", "img"}},
		{"enabled alone changes nothing", uninstalling("1.0.0", true, false), []skyhookv1.PackageStatus{entry("1.0.0", post, complete)}, Step{Done, post, "1.0.0", "img"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Next(tc.declared, tc.recorded, false, tc.declared.Interrupt != nil); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOrderFollowsTheLifecycle(t *testing.T) {
	stages := []skyhookv1.Stage{skyhookv1.StageApply, skyhookv1.StageConfig, skyhookv1.StageInterrupt, skyhookv1.StagePostInterrupt}
	for i := 1; i < len(stages); i++ {
		if Order(stages[i-1]) >= Order(stages[i]) {
			t.Errorf("%s does not come before %s", stages[i-1], stages[i])
		}
	}
	if Order(skyhookv1.StageUpgrade) != Order(skyhookv1.StageApply) {
		t.Error("upgrade and apply hold the same place")
	}
}
