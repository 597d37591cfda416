package release

import "sigs.k8s.io/yaml"

// KrewFile is the krew plugin manifest: krew wants it named after the
// plugin, and `kubectl krew install --manifest=skyhook.yaml` installs it.
const KrewFile = "skyhook.yaml"

// The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin), the fields this release fills.
type krewPlugin struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   krewMetadata `json:"metadata"`
	Spec       krewSpec     `json:"spec"`
}

type krewMetadata struct {
	Name string `json:"name"`
}

type krewSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description"`
	Platforms        []krewPlatform `json:"platforms"`
}

type krewPlatform struct {
	Selector krewSelector `json:"selector"`
	URI      string       `json:"uri"`
	SHA256   string       `json:"sha256"`
	Bin      string       `json:"bin"`
	Files    []krewFile   `json:"files"`
}

type krewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type krewFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

const krewDescription = `Skyhook rolls packages onto the host OS of a cluster's nodes. This plugin
shows the state of its rollouts per node and package, reads package logs,
pauses, resumes, disables and resets rollouts, validates Skyhook manifests
before they are applied, and pushes and pulls PackageSet artifacts. It takes
the commands and flags of NVIDIA NodeWright's kubectl plugin.
`

// writeKrewManifest writes the plugin manifest: one platform per archive,
// downloaded from downloadURL, checked by its sha256.
func writeKrewManifest(w *writer, v Version, downloadURL string, archives []archive) error {
	plugin := krewPlugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   krewMetadata{Name: "skyhook"},
		Spec: krewSpec{
			Version:          "v" + v.Semver, // krew wants the v
			Homepage:         Homepage,
			ShortDescription: "Watch and steer Skyhook node package rollouts",
			Description:      krewDescription,
		},
	}
	for _, a := range archives {
		plugin.Spec.Platforms = append(plugin.Spec.Platforms, krewPlatform{
			Selector: krewSelector{MatchLabels: map[string]string{"os": a.platform.OS, "arch": a.platform.Arch}},
			URI:      downloadURL + "/" + a.Name,
			SHA256:   a.SHA256,
			Bin:      Binary,
			Files:    []krewFile{{From: Binary, To: "."}, {From: "LICENSE", To: "."}},
		})
	}
	data, err := yaml.Marshal(plugin)
	if err != nil {
		return err
	}
	_, err = w.put(KrewFile, data)
	return err
}
