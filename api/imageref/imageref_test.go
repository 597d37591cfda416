package imageref

import "testing"

func TestParseKeepsWhatWasWritten(t *testing.T) {
	for _, tc := range []struct {
		image string
		want  Ref
	}{
		{"alpine", Ref{Repository: "alpine", Registry: "index.docker.io"}},
		{"alpine:3.20", Ref{Repository: "alpine", Tag: "3.20", Registry: "index.docker.io"}},
		{"ghcr.io/nvidia/skyhook-packages/shellscript:1.3.2",
			Ref{Repository: "ghcr.io/nvidia/skyhook-packages/shellscript", Tag: "1.3.2", Registry: "ghcr.io", ExplicitRegistry: true}},
		{"localhost:5000/pkg", Ref{Repository: "localhost:5000/pkg", Registry: "localhost:5000", ExplicitRegistry: true}},
		{"registry:5000/team/pkg:v1", Ref{Repository: "registry:5000/team/pkg", Tag: "v1", Registry: "registry:5000", ExplicitRegistry: true}},
		{"team/pkg@sha256:" + digest, Ref{Repository: "team/pkg", Digest: "sha256:" + digest, Registry: "index.docker.io"}},
		{"nvcr.io/pkg:1.0@sha256:" + digest,
			Ref{Repository: "nvcr.io/pkg", Tag: "1.0", Digest: "sha256:" + digest, Registry: "nvcr.io", ExplicitRegistry: true}},
	} {
		got, err := Parse(tc.image)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.image, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.image, got, tc.want)
		}
	}
}

func TestParseRefusesWhatIsNoReference(t *testing.T) {
	for _, image := range []string{"", "UPPER/case", "pkg:bad tag", "pkg@sha256:short"} {
		if _, err := Parse(image); err == nil {
			t.Errorf("Parse(%q): no error", image)
		}
	}
}

const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
