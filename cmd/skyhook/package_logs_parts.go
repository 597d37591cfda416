package main

import (
	"context"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skyhook-go/skyhook/agent/modelog"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// logPart is what `package logs` prints of a stage pod under one header:
// a container's whole log, or (Mode set) the part of it one agent mode
// wrote, where the container ran a stage and then its check (the compact
// shape, stagepod.Compact) and the check is asked for.
type logPart struct {
	Container string
	Mode      string
}

// title is the part's header name: the container, or the container and
// the mode cut from it.
func (p logPart) title() string {
	if p.Mode == "" {
		return p.Container
	}
	return p.Container + " (" + p.Mode + ")"
}

// cut is the part of a container's log the part names.
func (p logPart) cut(log string) string {
	if p.Mode == "" {
		return log
	}
	text, _ := modelog.Of(log, p.Mode)
	return text
}

// print prints the part of a container's log that the part's mode wrote,
// its last tail lines (all when tail is negative). The log is read whole
// and cut, not followed: the part ends where the next mode's marker would
// start.
func (p logPart) print(ctx context.Context, cs kubernetes.Interface, out io.Writer, pod *corev1.Pod, tail int64) error {
	var log strings.Builder
	if err := copyLogs(ctx, cs, &log, pod, logOptions(p.Container, false, -1)); err != nil {
		return err
	}
	_, err := io.WriteString(out, lastLines(p.cut(log.String()), tail))
	return err
}

// lastLines is the text's last n lines, all of it when n is negative.
func lastLines(text string, n int64) string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n >= 0 && int64(len(lines)) > n {
		lines = lines[int64(len(lines))-n:]
	}
	return strings.Join(lines, "")
}

// containerNames are the pod's containers in the order they run.
func containerNames(pod *corev1.Pod) []string {
	var names []string
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		if c.Name != "pause" { // the stage pod's placeholder prints nothing
			names = append(names, c.Name)
		}
	}
	return names
}

// containerIn is the part of the pod that -c names: one of its
// containers; or, as this operator's releases before NodeWright's names
// had them, copy, <stage> or <stage>-check; or a check's container,
// <package>-<stage>check, in a pod whose stage container runs the check
// too (its part of that container's log).
func containerIn(pod *corev1.Pod, name string) (logPart, bool) {
	names := containerNames(pod)
	if slices.Contains(names, name) {
		return logPart{Container: name}, true
	}
	pkg := stagepod.PackageOf(pod)
	switch stage, check := strings.CutSuffix(name, "-check"); {
	case name == "copy":
		return logPart{Container: stagepod.CopyContainer(pkg)}, slices.Contains(names, stagepod.CopyContainer(pkg))
	case check:
		return checkPart(pod, skyhookv1.Stage(stage))
	}
	for _, stage := range stagepod.Stages(pod) {
		if name == stagepod.CheckContainer(pkg, stage) {
			return checkPart(pod, stage)
		}
	}
	was := stagepod.StageContainer(pkg, skyhookv1.Stage(name))
	return logPart{Container: was}, slices.Contains(names, was)
}

// checkPart is where the stage's check logs in the pod: its own container
// (the NodeWright shape), or its part of the stage's container.
func checkPart(pod *corev1.Pod, stage skyhookv1.Stage) (logPart, bool) {
	if !stagepod.HasCheck(stage) {
		return logPart{}, false
	}
	pkg, names := stagepod.PackageOf(pod), containerNames(pod)
	if own := stagepod.CheckContainer(pkg, stage); slices.Contains(names, own) {
		return logPart{Container: own}, true
	}
	in := stagepod.StageContainer(pkg, stage)
	return logPart{Container: in, Mode: stagepod.CheckMode(stage)}, slices.Contains(names, in)
}

// partsToPrint are the parts of the pod the options ask for: -c's; else
// with --check the checks of the pod's stages (--stage's alone when
// given); else with --stage that stage's containers; else every
// container.
func partsToPrint(pod *corev1.Pod, o logsOptions) []logPart {
	if o.container != "" {
		part, _ := containerIn(pod, o.container)
		return []logPart{part}
	}
	all := stagepod.Stages(pod)
	stages := all
	if o.stage != "" {
		stages = []skyhookv1.Stage{skyhookv1.Stage(o.stage)}
	}
	var parts []logPart
	if o.check {
		for _, stage := range stages {
			if part, ok := checkPart(pod, stage); ok {
				parts = append(parts, part)
			}
		}
		return parts
	}
	names := containerNames(pod)
	if o.stage != "" && len(all) > 1 {
		// A run's pod: the stage's own containers, not its neighbours'.
		names = stagepod.StageContainers(pod, stages[0])
	}
	for _, name := range names {
		parts = append(parts, logPart{Container: name})
	}
	return parts
}
