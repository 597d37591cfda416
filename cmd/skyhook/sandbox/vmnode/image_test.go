package vmnode

import (
	"os"
	"path/filepath"
	"testing"
)

// The image's cache key changes with anything it is built from: a
// package, a guest file, a binary's cache path, an APT source's content;
// and stays when nothing does.
func TestImageFingerprintFollowsTheRecipe(t *testing.T) {
	source := filepath.Join(t.TempDir(), "debian.sources")
	if err := os.WriteFile(source, []byte("Types: deb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := func() imageRecipe {
		return imageRecipe{suite: "bookworm", sources: []string{source}, packages: []string{"systemd-sysv"},
			files: guestFiles(), binaries: map[string]string{"/usr/local/bin/kubelet": "/cache/kubelet/v1.35.4-aaaa/kubelet"}}
	}
	key := func(r imageRecipe) string {
		k, err := r.fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	want := key(base())
	if again := key(base()); again != want {
		t.Fatalf("the same recipe gives %s and %s", want, again)
	}
	changes := map[string]func(*imageRecipe){
		"a package": func(r *imageRecipe) { r.packages = append(r.packages, "vim") },
		"a file":    func(r *imageRecipe) { r.files["/etc/motd"] = guestFile{content: "hi", mode: 0o644} },
		"a binary":  func(r *imageRecipe) { r.binaries["/usr/local/bin/kubelet"] = "/cache/kubelet/v1.35.5-bbbb/kubelet" },
		"the suite": func(r *imageRecipe) { r.suite = "trixie" },
		"a source": func(r *imageRecipe) {
			other := filepath.Join(filepath.Dir(source), "other.sources")
			_ = os.WriteFile(other, []byte("Types: deb-src\n"), 0o644)
			r.sources = []string{other}
		},
	}
	for what, change := range changes {
		r := base()
		change(&r)
		if key(r) == want {
			t.Errorf("changing %s keeps the image %s", what, want)
		}
	}
}
