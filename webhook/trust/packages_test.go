package trust

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func rolloutOf(image, version, containerSHA string) *skyhookv1.Skyhook {
	return &skyhookv1.Skyhook{Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{
		"tuning": {PackageRef: skyhookv1.PackageRef{Version: version}, Image: image, ContainerSHA: containerSHA},
	}}}
}

// Which digest each request verifies: the writer's, the one kept from
// before, or none (the tag is resolved).
func TestPackagesPickTheDigestToVerify(t *testing.T) {
	const a, b = "sha256:aaaa", "sha256:bbbb"
	cases := []struct {
		name    string
		sk, old *skyhookv1.Skyhook
		digest  string
		kept    bool
	}{
		{"create without a digest", rolloutOf("r/x", "1.0.0", ""), nil, "", false},
		{"create with a digest", rolloutOf("r/x", "1.0.0", a), nil, a, false},
		{"re-apply without the pinned digest", rolloutOf("r/x", "1.0.0", ""), rolloutOf("r/x", "1.0.0", a), a, true},
		{"update carrying the pinned digest", rolloutOf("r/x", "1.0.0", a), rolloutOf("r/x", "1.0.0", a), a, true},
		{"update naming another digest", rolloutOf("r/x", "1.0.0", b), rolloutOf("r/x", "1.0.0", a), b, false},
		{"version bump carrying the old digest", rolloutOf("r/x", "1.0.1", a), rolloutOf("r/x", "1.0.0", a), "", false},
		{"image change carrying the old digest", rolloutOf("r/y", "1.0.0", a), rolloutOf("r/x", "1.0.0", a), "", false},
		{"version bump with a new digest", rolloutOf("r/x", "1.0.1", b), rolloutOf("r/x", "1.0.0", a), b, false},
		{"update of a package admitted unpinned", rolloutOf("r/x", "1.0.0", ""), rolloutOf("r/x", "1.0.0", ""), "", false},
	}
	for _, tc := range cases {
		got := Packages(tc.sk, tc.old)
		if len(got) != 1 || got[0].Key != "tuning" || got[0].Digest != tc.digest || got[0].Kept != tc.kept {
			t.Errorf("%s: got %+v, want digest %q kept %v", tc.name, got, tc.digest, tc.kept)
		}
	}
}
